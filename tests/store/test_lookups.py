"""Batched reads by id (``store/lookups.py``, issue 32) agree with the full scans they replace,
on both backends: cases of a version in position order, scorecard heads of a page of runs."""

from __future__ import annotations

from benchbook.contracts import Dataset
from benchbook.contracts.run import StartRunRequest
from benchbook.services import datasets as svc
from benchbook.services import run_execution, runs
from benchbook.services.context import Context
from benchbook.services.resolve import resolve_version
from benchbook.store import scorecards as card_repo
from benchbook.store.lookups import (
    LOOKUP_MAX_IDS,
    case_bodies_by_id,
    iter_cases_of,
    scorecard_heads,
)
from tests.eval.test_runs import arithmetic, python_harness


def _register(ctx: Context, n: int) -> int:
    cases = [{"id": f"q{i}", "env": {"kind": "prompt"}, "task": f"{i}?"} for i in range(n)]
    svc.register_dataset(
        ctx, Dataset.model_validate({"id": "d", "version": "1.0.0", "cases": cases})
    )
    with ctx.engine.connect() as conn:
        return resolve_version(conn, ctx.workspace, "d", "1.0.0").pk


def test_cases_by_id_match_the_scan_in_position_order(ctx: Context) -> None:
    pk = _register(ctx, 1200)
    with ctx.engine.connect() as conn:
        every = list(iter_cases_of(conn, pk))
        assert [p for p, _ in every] == list(range(1200))
        # More than one statement's worth of ids (500 a statement), unknown ids left out.
        wanted = {f"q{i}" for i in range(0, 1200, 2)} | {"nope", "q1200"}
        assert len(wanted) <= LOOKUP_MAX_IDS
        looked_up = list(iter_cases_of(conn, pk, wanted))
        assert looked_up == [(p, c) for p, c in every if c.id in wanted]
        assert [p for p, _ in case_bodies_by_id(conn, pk, ["q7", "q3"])] == [3, 7]
        # Past the lookup bound: the scan, filtered, gives the same.
        many = {f"q{i}" for i in range(LOOKUP_MAX_IDS + 1)}
        assert list(iter_cases_of(conn, pk, many)) == [(p, c) for p, c in every if c.id in many]
        assert list(iter_cases_of(conn, pk, [])) == []


def test_scorecard_heads_equal_one_read_each(ctx: Context) -> None:
    svc.register_dataset(ctx, arithmetic("sums", n=2))
    harness = python_harness(ctx, "add")
    ids = []
    for _ in range(3):
        run = runs.start_run(ctx, StartRunRequest(dataset="sums", harness=harness))
        ids.append(run_execution.execute_run(ctx, run.id).scorecard_id)
    with ctx.engine.connect() as conn:
        heads = scorecard_heads(conn, [*ids, None, "sc_unknown"])
        assert set(heads) == set(ids)
        for card in ids:
            assert card is not None
            assert tuple(heads[card]) == tuple(card_repo.get_scorecard(conn, card))
    listed = runs.list_runs(ctx)
    assert [r.scorecard_id for r in listed] == ids[::-1]
    assert all(r.counts.done == 2 and r.pass_rate is not None for r in listed)
