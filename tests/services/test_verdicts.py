"""Stored verdict vectors (issue 32, migration 0018) on SQLite and PostgreSQL: written when a
run ends and when a scorecard is rescored, filled at the first comparison of a scorecard without
one, read again from the rows when the run changed since; every comparison byte-identical to
the one read from the rows (the path before the vectors)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from sqlalchemy import delete, select, update

from benchbook.contracts.dataset import GraderSpec
from benchbook.eval.compare import compare_outcomes
from benchbook.eval.verdicts import Verdicts
from benchbook.services import comparisons, run_execution, runs, scorecards
from benchbook.services import datasets as ds
from benchbook.services.context import Context
from benchbook.store import run_results
from benchbook.store import runs as repo
from benchbook.store.tables import verdict_vectors
from benchbook.store.verdicts import run_stamp
from tests.eval.test_runs import arithmetic, python_harness, rctx, run_to_end

__all__ = ["rctx"]  # the fixture, imported for these tests
V = verdict_vectors.c


def stored(ctx: Context) -> dict[str, tuple[str, Verdicts]]:
    """``{scorecard_id: (run_stamp, vector)}`` of every stored vector."""
    with ctx.engine.connect() as conn:
        rows = conn.execute(select(V.scorecard_id, V.run_stamp, V.vector)).all()
    return {sid: (stamp, Verdicts.decode(bytes(blob))) for sid, stamp, blob in rows}


def rows_of(ctx: Context, scorecard_id: str) -> list[Any]:
    card = scorecards.get_scorecard(ctx, scorecard_id)
    with ctx.engine.connect() as conn:
        run = repo.get_run(conn, card.run_id)
        assert run is not None
        own = run.scorecard_id == scorecard_id
        return list(run_results.outcomes_of(conn, run.id, scorecard_id, own))


def stamp_of(ctx: Context, scorecard_id: str) -> str:
    run = runs.get_run(ctx, scorecards.get_scorecard(ctx, scorecard_id).run_id)
    return run_stamp(run.status, run.finished_at)


def compared(ctx: Context, base: str, cand: str) -> str:
    """The comparison's JSON, computed afresh."""
    comparisons.forget_comparisons()
    return comparisons.compare_scorecards(ctx, base, cand).model_dump_json()


def from_rows(ctx: Context, base: str, cand: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The comparison's JSON as computed before the vectors: each side's ordered row query,
    then ``compare_outcomes``."""

    def rows(conn: Any, run: repo.RunRow, scorecard_id: str) -> tuple[Any, bool]:
        own = scorecard_id == run.scorecard_id
        return run_results.outcomes_of(conn, run.id, scorecard_id, own), False

    with monkeypatch.context() as m:
        m.setattr(comparisons, "verdicts_of", rows)
        m.setattr(comparisons, "compare_verdicts", compare_outcomes)
        return compared(ctx, base, cand)


def no_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: Any) -> None:
        raise AssertionError("read the rows although a vector is stored")

    monkeypatch.setattr(run_results, "outcomes_of", refuse)


def test_ended_runs_and_rescores_store_their_vectors(rctx: Context) -> None:
    ds.register_dataset(rctx, arithmetic())
    base = run_to_end(rctx, python_harness(rctx, "explode"))
    rescored = scorecards.rescore_run(
        rctx, base.id, [GraderSpec(id="regex", config={"pattern": "7"})]
    )
    found = stored(rctx)
    assert set(found) == {base.scorecard_id, rescored.id}
    for scorecard_id, (stamp, vector) in found.items():
        assert stamp == stamp_of(rctx, scorecard_id) and stamp.startswith("finished|20")
        assert vector.rows() == rows_of(rctx, scorecard_id)
    assert found[base.scorecard_id][1].codes.count("E") == 2
    assert found[base.scorecard_id][1] != found[rescored.id][1]  # its own verdicts


@pytest.mark.parametrize("case", ["errors", "rescored", "missing", "repeats", "same"])
def test_comparisons_from_vectors_equal_those_from_the_rows(
    rctx: Context, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    ds.register_dataset(rctx, arithmetic())
    settings: dict[str, Any] = {"repeats": 3} if case == "repeats" else {}
    base = run_to_end(rctx, python_harness(rctx, "explode"), **settings)
    cand = run_to_end(rctx, python_harness(rctx, "add_wrong_on_odd_samples"), **settings)
    pair = (base.scorecard_id, cand.scorecard_id)
    if case == "rescored":
        grader = GraderSpec(id="regex", config={"pattern": "1"})
        pair = (base.scorecard_id, scorecards.rescore_run(rctx, cand.id, [grader]).id)
    elif case == "missing":
        subset = run_to_end(rctx, python_harness(rctx, "add", "add-x"), tags=["even"], limit=3)
        pair = (subset.scorecard_id, cand.scorecard_id)
    elif case == "same":
        pair = (cand.scorecard_id, cand.scorecard_id)
    expected = from_rows(rctx, *pair, monkeypatch)
    backwards = from_rows(rctx, pair[1], pair[0], monkeypatch)
    counts = orjson.loads(expected)["counts"]
    what = {"errors": ("fixed", 2), "rescored": ("regressed", 7),
            "missing": ("new_in_candidate", 9), "repeats": ("regressed", 10),
            "same": ("still_passing", 12)}[case]  # fmt: skip
    assert counts[what[0]] == what[1]
    assert len(stored(rctx)) >= 2
    no_rows(monkeypatch)
    assert compared(rctx, *pair) == expected
    assert compared(rctx, pair[1], pair[0]) == backwards


def test_a_scorecard_without_a_vector_gets_one_at_its_first_comparison(
    rctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    ds.register_dataset(rctx, arithmetic())
    base = run_to_end(rctx, python_harness(rctx, "explode")).scorecard_id
    cand = run_to_end(rctx, python_harness(rctx, "add")).scorecard_id
    with rctx.engine.begin() as conn:  # as scorecards from before migration 0018
        conn.execute(delete(verdict_vectors))
    expected = from_rows(rctx, base, cand, monkeypatch)
    assert compared(rctx, base, cand) == expected
    found = stored(rctx)
    assert found[base] == (stamp_of(rctx, base), Verdicts.of_rows(rows_of(rctx, base)))
    assert found[cand][0] == stamp_of(rctx, cand)
    no_rows(monkeypatch)
    assert compared(rctx, base, cand) == expected


def test_a_run_queued_again_is_read_from_its_rows_until_it_ends_with_a_new_vector(
    rctx: Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    ds.register_dataset(rctx, arithmetic())
    base = run_to_end(rctx, python_harness(rctx, "explode"))
    cand = run_to_end(rctx, python_harness(rctx, "add")).scorecard_id
    first = stored(rctx)[base.scorecard_id]
    runs.retry_run(rctx, base.id)  # its errored results are gone until it runs again
    queued = compared(rctx, base.scorecard_id, cand)
    assert queued == from_rows(rctx, base.scorecard_id, cand, monkeypatch)
    assert '"new_in_candidate":2' in queued
    assert stored(rctx)[base.scorecard_id] == first  # a run not ended stores nothing
    run_execution.execute_run(rctx, base.id)
    again = stored(rctx)[base.scorecard_id]
    assert again[0] == stamp_of(rctx, base.scorecard_id) != first[0]
    assert again[1].rows() == rows_of(rctx, base.scorecard_id)


@pytest.mark.parametrize("broken", ["stamp", "blob"])
def test_a_vector_of_another_run_state_or_unreadable_is_replaced(
    rctx: Context, monkeypatch: pytest.MonkeyPatch, broken: str
) -> None:
    ds.register_dataset(rctx, arithmetic())
    base = run_to_end(rctx, python_harness(rctx, "explode")).scorecard_id
    cand = run_to_end(rctx, python_harness(rctx, "add")).scorecard_id
    expected = from_rows(rctx, base, cand, monkeypatch)
    wrong = Verdicts.of_rows([("c0", 0, "failed")]).encode()
    values = {"run_stamp": "finished|-", "vector": wrong} if broken == "stamp" else {"vector": b"x"}
    with rctx.engine.begin() as conn:
        conn.execute(update(verdict_vectors).where(V.scorecard_id == base).values(**values))
    assert compared(rctx, base, cand) == expected
    assert stored(rctx)[base] == (stamp_of(rctx, base), Verdicts.of_rows(rows_of(rctx, base)))
