"""A case's history across runs and the flaky cases of a run (issue 30 §2). Reads:
``runs:read``, only the caller's workspace's runs.

History: every result of one case over the workspace's runs of a dataset id (any version),
newest run first, keyset-paged. Flaky: the cases whose verdict differs across the samples of a
run, or across that run and the other ended runs of the same harness@version on the same
dataset version — verdicts as each run's own scorecard gave them (errored results fail).
"""

from __future__ import annotations

import re

import orjson

from benchbook.contracts.history import CaseHistoryItem, CaseHistoryPage, FlakyCase, FlakyKind
from benchbook.errors import InvalidInput, NotFound
from benchbook.services.bounds import check_text
from benchbook.services.context import Context
from benchbook.services.runs import MAX_PAGE, load_run
from benchbook.store import history as repo
from benchbook.store import runs as run_repo

CURSOR = re.compile(r"(run_[A-Za-z0-9_-]{1,36}):([0-9]{1,9})")
"""A history cursor: ``<run id>:<sample>`` of the last item shown."""


def list_case_results(
    ctx: Context, dataset_id: str, case_id: str, before: str | None = None, limit: int = 50
) -> CaseHistoryPage:
    """Every result of ``case_id`` in the workspace's runs of ``dataset_id`` (any version;
    ``not_run`` left out): harness, dataset version, run date, status, verdict, scores, cost
    and latency; newest run first, then sample.

    Args:
        before: the ``next_before`` cursor of the previous page (``run_…:sample``).
        limit: 1–500.

    Raises:
        InvalidInput: a bad cursor or limit. NotFound: the cursor's run is not the
            workspace's.
    """
    ctx.require("runs:read")
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidInput(f"limit must be between 1 and {MAX_PAGE}", {"limit": limit})
    check_text(case_id, "case_id")
    keyset = None
    with ctx.engine.connect() as conn:
        if before is not None:
            match = CURSOR.fullmatch(before)
            if match is None:
                raise InvalidInput("before must be 'run_…:<sample>' from a previous page", {})
            last = run_repo.get_run(conn, match[1], ctx.workspace)
            if last is None:
                raise NotFound(f"before: {match[1]!r} is not a run of this workspace", {})
            keyset = (last.created_at, last.id, int(match[2]))
        rows = repo.case_history(conn, ctx.workspace, dataset_id, case_id, keyset, limit + 1)
    items = [
        CaseHistoryItem(
            run_id=r.run_id,
            harness=r.harness_ref,
            dataset_version=r.dataset_version,
            run_created_at=r.created_at,
            sample=r.sample,
            status=r.status,
            passed=_verdict(r.status, r.passed),
            error=r.error,
            scores={s["metric"]: s["value"] for s in orjson.loads(r.scores or "[]")},
            cost_usd=r.cost_usd,
            duration_ms=r.duration_ms,
            cursor=f"{r.run_id}:{r.sample}",
        )
        for r in rows[:limit]
    ]
    more = len(rows) > limit
    return CaseHistoryPage(
        dataset_id=dataset_id,
        case_id=case_id,
        items=items,
        next_before=items[-1].cursor if more and items else None,
    )


def _verdict(status: str, passed: bool | None) -> bool | None:
    """An errored result failed; an ``ok`` one without a verdict has none."""
    if status == "ok":
        return None if passed is None else bool(passed)
    return False


def list_flaky_cases(ctx: Context, run_id: str) -> list[FlakyCase]:
    """The run's cases whose verdict differs across its samples (kind ``samples``) or across
    it and the other ended runs of its harness@version on its dataset version (``runs``), in
    case-id order.

    Raises:
        NotFound: unknown run or another workspace's.
    """
    ctx.require("runs:read")
    with ctx.engine.connect() as conn:
        load_run(conn, ctx, run_id)
        siblings = repo.sibling_runs(conn, run_id, ctx.workspace)
        rows = repo.flaky_cases(conn, run_id, siblings)
    out = []
    for r in rows:
        kinds: list[FlakyKind] = []
        if r.in_samples:
            kinds.append("samples")
        if r.runs > 1:
            kinds.append("runs")
        out.append(
            FlakyCase(
                case_id=r.case_id,
                kinds=kinds,
                passed=int(r.passed),
                results=int(r.results),
                runs=int(r.runs),
            )
        )
    return out
