"""Reading runs back (SPEC H.4, H.9): one run or a page of them as :class:`Run` views, with
counts and pass rates, and per dataset id the runs' summary for the datasets list.

Everything here reads the store; nothing starts or executes a run (that is
:mod:`benchbook.services.runs` and :mod:`benchbook.services.run_execution`).
"""

from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy import Connection

from benchbook.contracts.run import DatasetRuns, ErrorCount, Run, RunCounts, RunPlan, RunSettings
from benchbook.errors import InvalidInput, NotFound
from benchbook.eval.scorecards import rated, wilson_interval
from benchbook.services.bounds import bounded_search
from benchbook.services.context import Context
from benchbook.store import run_results
from benchbook.store import runs as repo
from benchbook.store.lookups import ScorecardHeads, scorecard_heads
from benchbook.store.scorecards import get_scorecard

MAX_PAGE = 500


def load_run(conn: Connection, ctx: Context, run_id: str) -> repo.RunRow:
    """The caller's run; NotFound for unknown ids and other workspaces' runs alike."""
    row = repo.get_run(conn, run_id, ctx.workspace)
    if row is None:
        raise NotFound(f"run {run_id!r} not found", {"id": run_id})
    return row


SUMMARIZED = ("finished", "cancelled", "budget_exhausted")
"""Statuses a run reaches only through computing its own scorecard's summary."""


def _ended_counts(
    conn: Connection, row: repo.RunRow, heads: ScorecardHeads | None = None
) -> dict[str, int] | None:
    """An ended run's counts from its own scorecard's stored summary (one row read instead of
    counting every result); None when the run may still change or has no summary. A failed
    run is counted afresh: it can fail after a retry without a new summary."""
    if row.status not in SUMMARIZED or row.scorecard_id is None:
        return None
    head = heads.get(row.scorecard_id) if heads else get_scorecard(conn, row.scorecard_id)
    if head is None or head.summary is None:
        return None
    card = orjson.loads(head.summary)
    n, errors = int(card["n"]), int(card["errors"])
    grader_errors = int(card.get("grader_errors", 0))  # summaries before 0017: none counted
    return {
        "done": n,
        "ok": n - errors,
        "error": errors,
        "not_run": int(card["not_run"]),
        "passed": int(card["passed"]),
        "grader_errors": grader_errors,
        # The summary says whether its pass rate applied (``rated``); stand in accordingly.
        "verdicts": n - errors - grader_errors if card.get("pass_rate") is not None else 0,
    }


def run_view(conn: Connection, row: repo.RunRow, heads: ScorecardHeads | None = None) -> Run:
    """The :class:`Run` of a stored row, counts read from its results."""
    c = _ended_counts(conn, row, heads) or run_results.counts(conn, row.id)
    verdicts = c.pop("verdicts")
    counts = RunCounts(total=row.total, **c)
    n = c["ok"] + c["error"]
    rates = rated(n, c["ok"], verdicts)
    return Run(
        id=row.id,
        workspace=row.workspace,
        dataset=f"{row.dataset_id}@{row.dataset_version}",
        dataset_content_hash=row.dataset_content_hash,
        harness=row.harness_ref,
        harness_hash=row.harness_hash,
        plan=RunPlan.model_validate_json(row.plan),
        plan_hash=row.plan_hash,
        settings=RunSettings.model_validate_json(row.settings),
        status=row.status,
        counts=counts,
        spent_usd=row.spent_usd,
        scorecard_id=row.scorecard_id,
        pass_rate=c["passed"] / n if rates else None,
        pass_interval=wilson_interval(c["passed"], n) if rates else None,
        error=row.error,
        top_errors=[
            ErrorCount(error=e, count=k, kind=kind)
            for e, k, kind in run_results.top_errors(
                conn, row.id, row.scorecard_id if c["grader_errors"] else None
            )
        ]
        if c["error"] or c["grader_errors"]
        else [],
        budget_caps=orjson.loads(row.budget_caps) if row.budget_caps else [],
        created_by=row.created_by,
        created_at=row.created_at,
        started_at=row.started_at,
        finished_at=row.finished_at,
        reproducibility=orjson.loads(row.reproducibility),
        origin=row.origin,
        reported_by=row.reported_by,
    )


def get_run(ctx: Context, run_id: str) -> Run:
    """One run with its counts and pass rate so far.

    Raises:
        NotFound: unknown id or another workspace's run.
    """
    ctx.require("runs:read")
    with ctx.engine.connect() as conn:
        return run_view(conn, load_run(conn, ctx, run_id))


def list_runs(
    ctx: Context,
    dataset: str | None = None,
    harness: str | None = None,
    status: str | None = None,
    limit: int = 50,
    before: str | None = None,
) -> list[Run]:
    """The workspace's runs, newest first.

    Args:
        dataset: a dataset id, or ``id@version`` for one version.
        harness: a harness id, or ``id@version``.
        status: one run status.
        limit: at most this many (1–500).
        before: the id of the last run of the previous page (keyset paging): runs created
            before it.

    Raises:
        InvalidInput: ``limit`` out of range, ``dataset`` or ``harness`` past 512 characters.
        NotFound: ``before`` is not one of the workspace's runs.
    """
    ctx.require("runs:read")
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidInput(f"limit must be between 1 and {MAX_PAGE}", {"limit": limit})
    bounded_search(dataset, "dataset")
    bounded_search(harness, "harness")
    dataset_id, _, dataset_version = (dataset or "").partition("@")
    with ctx.engine.connect() as conn:
        keyset = None
        if before is not None:
            last = repo.get_run(conn, before, ctx.workspace)
            if last is None:  # an unknown reference is 404, as every cursor naming a row
                raise NotFound(
                    f"before: {before!r} is not a run of this workspace", {"before": before}
                )
            keyset = (last.created_at, last.id)
        rows = repo.list_runs(
            conn,
            ctx.workspace,
            dataset_id=dataset_id or None,
            dataset_version=dataset_version or None,
            harness=harness,
            status=status,
            before=keyset,
            limit=limit,
        )
        heads = scorecard_heads(conn, [r.scorecard_id for r in rows])  # one read, not one a run
        return [run_view(conn, r, heads) for r in rows]


def summarize_dataset_runs(ctx: Context, dataset_ids: list[str]) -> dict[str, DatasetRuns]:
    """Per dataset id: how many runs the workspace has of it and the pass rate of the newest
    finished one (for the datasets list). Ids without runs are absent. Not an operation: a
    page read over :func:`list_runs`' data, two queries for any number of ids.

    Args:
        dataset_ids: at most 500 ids.

    Raises:
        InvalidInput: more than 500 ids.
    """
    ctx.require("runs:read")
    if len(dataset_ids) > MAX_PAGE:
        raise InvalidInput(f"at most {MAX_PAGE} dataset ids", {"dataset_ids": len(dataset_ids)})
    with ctx.engine.connect() as conn:
        found = repo.dataset_run_summaries(conn, ctx.workspace, dataset_ids)
    out = {}
    for dataset_id, (count, last_run, summary) in found.items():
        rate = orjson.loads(summary).get("pass_rate") if summary else None
        out[dataset_id] = DatasetRuns(runs=count, last_run_id=last_run, last_pass_rate=rate)
    return out


def with_run_status(conn: Connection, workspace: str, details: dict[str, Any]) -> dict[str, Any]:
    """A timeline ``run`` event's details plus the run's current status, counts and pass rate
    (``status: "deleted"`` never happens: runs are kept)."""
    row = repo.get_run(conn, str(details.get("run_id")), workspace)
    if row is None:
        return details
    view = run_view(conn, row)
    return {
        **details,
        "status": view.status,
        "pass_rate": view.pass_rate,
        "done": view.counts.done,
        "total": view.counts.total,
    }
