"""Verdict vectors (issue 32): a scorecard's outcomes as one blob, and their comparison equal to
``compare_outcomes`` on the same rows, byte for byte, whatever the two sides hold."""

from __future__ import annotations

import random
import zlib

import orjson
import pytest

from benchbook.contracts.comparison import Outcome
from benchbook.eval.compare import compare_outcomes
from benchbook.eval.verdicts import Verdicts, compare_verdicts
from tests.eval.test_compare import card

Side = list[tuple[str, int, Outcome | None]]
OUTCOMES: tuple[Outcome | None, ...] = ("passed", "failed", "error", None)


def side(rng: random.Random, ids: list[str], samples: int) -> Side:
    return [(i, s, rng.choice(OUTCOMES)) for i in ids for s in range(samples)]


def sides(seed: int) -> tuple[Side, Side]:
    """Two sides of one of six shapes: the same keys in the same order (single or repeated
    samples), a candidate missing cases, one with new cases, reordered keys, disjoint ids."""
    rng = random.Random(seed)
    ids = [f"c{i}" for i in range(rng.randint(0, 60))]
    shape, samples = seed % 6, 1 + (seed % 5 == 0) * 2
    base = side(rng, ids, samples)
    other = {
        0: ids,
        1: [i for i in ids if rng.random() < 0.7],  # missing in the candidate
        2: [*ids, "n1", "n2"],  # new in the candidate
        3: rng.sample(ids, len(ids)),  # another order
        4: [f"x{i}" for i in range(5)],  # nothing shared
        5: ids,
    }[shape]
    return base, side(rng, other, samples)


@pytest.mark.parametrize("seed", range(60))
def test_vectors_compare_exactly_as_their_rows(seed: int) -> None:
    base, cand = sides(seed)
    a, b = card("sc_a"), card("sc_b")
    before, after = Verdicts.of_rows(base), Verdicts.of_rows(cand)
    assert Verdicts.decode(before.encode()) == before and before.rows() == base
    expected = compare_outcomes(a, b, base, cand, resamples=200, seed=seed)
    got = compare_verdicts(a, b, before, after, resamples=200, seed=seed)
    assert got.model_dump_json() == expected.model_dump_json()


def test_a_large_aligned_pair_compares_exactly_as_its_rows() -> None:
    rng = random.Random(7)
    ids = [f"gsm8k-{i}" for i in range(20_000)]
    base, cand = side(rng, ids, 1), side(rng, ids, 1)
    a, b = card("sc_a"), card("sc_b")
    vectors = Verdicts.decode(Verdicts.of_rows(base).encode()), Verdicts.of_rows(cand)
    got = compare_verdicts(a, b, *vectors, resamples=500)
    assert got.model_dump_json() == compare_outcomes(a, b, base, cand, 500).model_dump_json()
    assert got.counts.regressed > 0 and got.counts.missing_in_candidate > 0


def test_samples_are_stored_only_when_some_is_not_zero() -> None:
    assert Verdicts.of_rows([("a", 0, "passed"), ("b", 0, None)]).samples is None
    repeated = Verdicts.of_rows([("a", 0, "passed"), ("a", 1, "error")])
    assert repeated.samples == [0, 1] and repeated.codes == "PE"


@pytest.mark.parametrize(
    "blob",
    [
        b"not zlib",
        zlib.compress(b"[1, [], null"),
        zlib.compress(orjson.dumps([2, ["a"], None, "P"])),  # another format
        zlib.compress(orjson.dumps([1, ["a", "b"], None, "P"])),  # a code missing
        zlib.compress(orjson.dumps([1, ["a"], [0, 1], "P"])),  # a sample too many
        zlib.compress(orjson.dumps([1, ["a"], None, "X"])),  # unknown code
        zlib.compress(orjson.dumps({"v": 1})),
    ],
)
def test_anything_else_is_not_a_vector(blob: bytes) -> None:
    with pytest.raises(ValueError):
        Verdicts.decode(blob)
