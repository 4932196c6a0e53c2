"""A scorecard's verdict vector: its ``(case_id, sample, outcome)`` of every result in dataset
order as three columns, stored as one blob (``store/verdicts.py``, migration 0018), and the
comparison of two such vectors (:func:`compare_verdicts`).

A comparison read each side's outcomes with an ordered 100k-row query (~0.35 s a side in a
fresh process); the vector is one row. The blob is ``zlib(orjson([1, case_ids, samples,
codes]))``: the case ids in order, the samples (null when every sample is 0) and one character
per pair — ``P`` passed, ``F`` failed, ``E`` error, ``-`` not run. :func:`compare_verdicts`
gives exactly what :func:`benchbook.eval.compare.compare_outcomes` gives on the same rows
(``tests/eval/test_verdicts.py``); two sides with the same keys in the same order are paired
column by column without a Python-level loop.
"""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from itertools import compress, repeat
from operator import add
from typing import Any

import orjson

from benchbook.contracts.comparison import CaseTransition, Comparison, Outcome
from benchbook.contracts.scorecard import Scorecard
from benchbook.eval.compare import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Pairing,
    comparison_of,
    gc_paused,
    pair_outcomes,
    transition,
)

FORMAT = 1
"""The blob's format number (its first element); a blob of another format reads as absent."""
CODE: dict[Outcome | None, str] = {"passed": "P", "failed": "F", "error": "E", None: "-"}
OUTCOME: dict[str, Outcome | None] = {code: outcome for outcome, code in CODE.items()}
_BOTH_ABSENT = "--"
_PAIR: dict[str, tuple[str, Outcome | None, Outcome | None]] = {
    b + c: (transition(OUTCOME[b], OUTCOME[c]), OUTCOME[b], OUTCOME[c])
    for b in OUTCOME
    for c in OUTCOME
    if b + c != _BOTH_ABSENT
}
"""Two sides' codes → (transition, baseline outcome, candidate outcome)."""
_NEW_CASE = partial(tuple.__new__, CaseTransition)  # skips the named tuple's Python constructor


@dataclass(frozen=True)
class Verdicts:
    """One scorecard's outcomes in dataset order: ``case_ids[i]``, ``samples[i]`` (``samples``
    None: every sample is 0) and ``codes[i]`` (one of ``P F E -``, see :data:`CODE`)."""

    case_ids: list[str]
    samples: list[int] | None
    codes: str

    def __len__(self) -> int:
        return len(self.case_ids)

    @classmethod
    def of_rows(cls, rows: Sequence[tuple[str, int, Outcome | None]]) -> Verdicts:
        """From ``(case_id, sample, outcome)`` rows (``outcome`` None: not run).

        Raises:
            KeyError: an outcome other than passed, failed, error or None.
        """
        samples = [r[1] for r in rows]
        return cls(
            case_ids=[r[0] for r in rows],
            samples=samples if any(samples) else None,
            codes="".join([CODE[r[2]] for r in rows]),
        )

    def rows(self) -> list[tuple[str, int, Outcome | None]]:
        """The ``(case_id, sample, outcome)`` rows back, in order."""
        ids, codes = self.case_ids, map(OUTCOME.__getitem__, self.codes)
        samples = self.samples if self.samples is not None else repeat(0, len(ids))
        return list(zip(ids, samples, codes, strict=True))

    def encode(self) -> bytes:
        """The stored blob (see the module docstring)."""
        return zlib.compress(orjson.dumps([FORMAT, self.case_ids, self.samples, self.codes]), 6)

    @classmethod
    def decode(cls, blob: bytes) -> Verdicts:
        """The vector of a blob from :meth:`encode`.

        Raises:
            ValueError: not such a blob (another format, columns of different lengths, a code
                outside ``P F E -``).
        """
        try:
            form, case_ids, samples, codes = orjson.loads(zlib.decompress(blob))
        except (zlib.error, orjson.JSONDecodeError, TypeError, ValueError) as exc:
            raise ValueError(f"not a verdict vector: {exc}") from exc
        n = len(case_ids)
        if form != FORMAT or len(codes) != n or (samples is not None and len(samples) != n):
            raise ValueError(f"not a verdict vector of format {FORMAT} (format {form!r})")
        if not set(codes) <= OUTCOME.keys():
            raise ValueError(f"unknown outcome codes {sorted(set(codes) - OUTCOME.keys())}")
        return cls(case_ids=case_ids, samples=samples, codes=codes)


def _pair_columns(before: Verdicts, after: Verdicts) -> Pairing | None:
    """:func:`~benchbook.eval.compare.pair_outcomes` of two vectors with the same keys in
    the same order, column by column (no Python-level loop per pair); None when the keys
    differ or repeat (then the rows are paired as before)."""
    if before.case_ids != after.case_ids or before.samples != after.samples:
        return None
    ids, samples = before.case_ids, before.samples
    keys: Any = ids if samples is None else zip(ids, samples, strict=True)
    if len(set(keys)) != len(ids):
        return None
    p = Pairing(repeats=samples is not None and any(samples))
    pairs = list(map(add, before.codes, after.codes))  # "PF": passed → failed
    kept = list(map(_BOTH_ABSENT.__ne__, pairs))  # not run on both sides: nothing to say
    both = compress(zip(ids, samples or repeat(0, len(ids)), strict=True), kept)
    decided = map(_PAIR.__getitem__, compress(pairs, kept))
    p.cases = list(map(_NEW_CASE, map(add, both, decided)))
    for code, n in Counter(pairs).items():
        if code != _BOTH_ABSENT:
            p.counts[_PAIR[code][0]] += n
    return p


def compare_verdicts(
    base: Scorecard,
    cand: Scorecard,
    before: Verdicts,
    after: Verdicts,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Comparison:
    """:func:`~benchbook.eval.compare.compare_outcomes` of ``before.rows()`` and
    ``after.rows()`` — the same comparison, without the rows when the keys line up.

    Raises:
        ValueError: ``resamples`` < 1.
    """
    with gc_paused():
        p = _pair_columns(before, after)
        if p is None:
            p = pair_outcomes(before.rows(), after.rows())
    return comparison_of(base, cand, p, resamples, seed)
