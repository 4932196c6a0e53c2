"""Reading a run's results (SPEC H.4): pages of (case, sample) results, one full trace, and a
run's status for the dataset timeline."""

from __future__ import annotations

import re
from typing import Any

import orjson
from sqlalchemy import Connection

from benchbook.contracts.run import CaseResult, Trace
from benchbook.contracts.score import Score
from benchbook.errors import InvalidInput, NotFound
from benchbook.services import traces
from benchbook.services.context import Context
from benchbook.services.runs import MAX_PAGE, load_run, run_view
from benchbook.store import runs as repo


def list_run_results(
    ctx: Context, run_id: str, after: str | None = None, limit: int = 100
) -> list[CaseResult]:
    """A page of the run's (case, sample) results in dataset order, with the primary
    scorecard's scores and without traces (read one with :func:`get_run_trace`).

    Args:
        after: the cursor ``"<position>:<sample>"`` of the last result of the previous page.
        limit: 1–500.
    """
    ctx.require("runs:read")
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidInput(f"limit must be between 1 and {MAX_PAGE}", {"limit": limit})
    cursor = _cursor(after)
    with ctx.engine.connect() as conn:
        row = load_run(conn, ctx, run_id)
        rows = repo.result_page(conn, run_id, cursor, limit)
        scores = repo.scores_of(conn, row.scorecard_id) if row.scorecard_id and rows else {}
    out = []
    for r in rows:
        _, score_json = scores.get((r.case_id, r.sample), (None, "[]"))
        out.append(
            CaseResult(
                case_id=r.case_id,
                sample=r.sample,
                position=r.position,
                status=r.status,
                error=r.error,
                answer=r.answer,
                passed=r.passed,
                scores=[Score.model_validate(s) for s in orjson.loads(score_json)],
                cost_usd=r.cost_usd,
                duration_ms=r.duration_ms,
            )
        )
    return out


RESULTS_CURSOR_PATTERN = "^([0-9]{1,18})(?::([0-9]{1,9}))?$"
"""A results page cursor ``position:sample`` (``next_after``), ASCII digits only."""


def _cursor(after: str | None) -> tuple[int, int] | None:
    if after is None:
        return None
    match = re.fullmatch(RESULTS_CURSOR_PATTERN[1:-1], after)
    if match is None:
        raise InvalidInput(
            "after must be '<position>:<sample>' from a previous page", {"after": after}
        )
    return int(match[1]), int(match[2] or "0")


def get_run_trace(ctx: Context, run_id: str, case_id: str, sample: int = 0) -> Trace:
    """The full trace of one (case, sample) of a run.

    Raises:
        NotFound: unknown run (or another workspace's) or no result for that case and sample.
    """
    ctx.require("runs:read")
    with ctx.engine.connect() as conn:
        load_run(conn, ctx, run_id)
        found = repo.trace_of(conn, run_id, case_id, sample)
    if found is None or (found.trace is None and found.trace_path is None):
        raise NotFound(
            f"no trace for case {case_id!r} sample {sample} in run {run_id}",
            {"id": run_id, "case_id": case_id, "sample": sample},
        )
    return traces.load_trace(ctx.settings, found.trace, found.trace_path)


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
