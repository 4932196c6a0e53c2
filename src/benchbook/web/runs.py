"""Run pages (SPEC G, H.4–H.6): the runs list, a run (live progress, scorecards, a filtered
page of its cases) and one case's trace beside its gold. Each handler calls
``services.runs``, ``services.run_results``, ``services.scorecards`` and ``services.datasets``;
pages hold no rules. ``/runs/{id}/progress.json`` feeds the run page's poll
(``static/run.js``).

Run paths match only run ids (``run_…``, the ``runid`` convertor), so other ``/runs/…`` pages
(the start-run form) can live beside them in any router order.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import JSONResponse
from starlette.convertors import Convertor, register_url_convertor

from benchbook.contracts.run import RESULT_FILTERS, ResultFilter, Run
from benchbook.contracts.scorecard import Scorecard
from benchbook.errors import BenchbookError, NotFound
from benchbook.services import datasets, harnesses, run_results, runs, scorecards
from benchbook.services.runs import TERMINAL
from benchbook.web.errors import JsonRoute, PageRoute
from benchbook.web.render import patch_lines, people, render
from benchbook.web.session import PageDep
from benchbook.web.trace_view import conversation, is_conversation

LIST_PAGE = 50
CASE_PAGE = 50
METRIC_COLUMNS = 8
POLL_MS = 1000
STATUSES = ("queued", "running", "finished", "failed", "cancelled", "budget_exhausted")
BASELINE_FILTERS = ("regressed", "fixed")


class RunIdConvertor(Convertor[str]):
    """Path segments that are run ids (``run_`` + letters, digits, ``_`` or ``-``)."""

    regex = "run_[A-Za-z0-9_-]+"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("runid", RunIdConvertor())

router = APIRouter(route_class=PageRoute, include_in_schema=False)
calls = APIRouter(route_class=JsonRoute, include_in_schema=False)


@router.get("/runs")
def list_page(
    request: Request,
    page: PageDep,
    dataset: str = "",
    harness: str = "",
    status: str = "",
    before: str | None = None,
) -> Response:
    """Runs of the workspace, newest first: filters, pass rate with its interval, cost, who
    started each and when; keyset-paged (``before`` = the last run id shown)."""
    chosen = status if status in STATUSES else ""
    items = runs.list_runs(
        page.ctx,
        dataset=dataset.strip() or None,
        harness=harness.strip() or None,
        status=chosen or None,
        limit=LIST_PAGE + 1,
        before=before or None,
    )
    return render(
        request,
        page,
        "runs.html",
        nav="runs",
        items=items[:LIST_PAGE],
        more=len(items) > LIST_PAGE,
        dataset=dataset.strip(),
        harness=harness.strip(),
        status=chosen,
        statuses=STATUSES,
        before=before,
        dataset_ids=[d.id for d in datasets.list_datasets(page.ctx, limit=200).items],
        harness_ids=_harness_ids(page),
        names=people(page),
        tags=scorecards.tags_of_scorecards(
            page.ctx, [r.scorecard_id for r in items[:LIST_PAGE] if r.scorecard_id]
        ),
    )


def _harness_ids(page: Any) -> list[str]:
    try:
        return [h.id for h in harnesses.list_harnesses(page.ctx)]
    except BenchbookError:  # a suggestion list only
        return []


def progress(run: Run, now: datetime | None = None) -> dict[str, Any]:
    """The run page's live numbers: counts, percent done, pass rate and cost so far, and the
    ETA in seconds (remaining pairs at the average rate since the run started; None before
    the first result or once the run has ended)."""
    counts = run.counts
    finished = counts.done + counts.not_run
    eta_s = None
    if run.status == "running" and run.started_at and counts.done:
        started = run.started_at if run.started_at.tzinfo else run.started_at.replace(tzinfo=UTC)
        elapsed = ((now or datetime.now(UTC)) - started).total_seconds()
        eta_s = max(0.0, elapsed / counts.done * (counts.total - finished))
    return {
        "id": run.id,
        "status": run.status,
        "ended": run.status in TERMINAL,
        "total": counts.total,
        "done": counts.done,
        "errors": counts.error,
        "grader_errors": counts.grader_errors,
        "not_run": counts.not_run,
        "passed": counts.passed,
        "percent": round(100 * finished / counts.total, 1) if counts.total else 100.0,
        "pass_rate": run.pass_rate,
        "spent_usd": run.spent_usd,
        "eta_s": eta_s,
    }


@calls.get("/runs/{run_id:runid}/progress.json")
def progress_json(page: PageDep, run_id: str) -> Response:
    """The run's progress for the page's poll (:func:`progress`)."""
    return JSONResponse(progress(runs.get_run(page.ctx, run_id)))


@router.get("/runs/{run_id:runid}")
def run_page(
    request: Request,
    page: PageDep,
    run_id: str,
    outcome: str = "",
    q: str = "",
    baseline: str = "",
    after: str | None = None,
    scorecard: str = "",
) -> Response:
    """A run: live progress while it runs, its scorecards once it has ended (the newest
    first), and a page of its (case, sample) results under one of them (the ``scorecard``
    picker; the run's own by default) filtered by outcome and searched by case id."""
    run = runs.get_run(page.ctx, run_id)
    chosen: ResultFilter | None = outcome if outcome in RESULT_FILTERS else None
    baseline = baseline.strip()
    if chosen in BASELINE_FILTERS and not baseline:
        chosen = None  # the filter pills offer them only with a baseline
    cards = scorecards.list_scorecards(page.ctx, run_id) if run.status in TERMINAL else []
    cards = sorted(cards, key=lambda c: (c.created_at, c.rescore_of is not None), reverse=True)
    picked = next((c for c in cards if c.id == scorecard), None)
    results = run_results.list_run_results(
        page.ctx,
        run_id,
        after=after or None,
        limit=CASE_PAGE + 1,
        outcome=chosen,
        search=q.strip() or None,
        baseline=baseline or None,
        scorecard=picked.id if picked else None,
    )
    shown = results[:CASE_PAGE]
    next_after = f"{shown[-1].position}:{shown[-1].sample}" if shown else None
    if len(results) <= CASE_PAGE and next_after is not None:  # the end, or a byte bound cut
        probe = run_results.list_run_results(
            page.ctx,
            run_id,
            after=next_after,
            limit=1,
            outcome=chosen,
            search=q.strip() or None,
            baseline=baseline or None,
        )
        next_after = next_after if probe else None
    return render(
        request,
        page,
        "run.html",
        nav="runs",
        run=run,
        live=progress(run),
        poll_ms=POLL_MS,
        cards=cards,
        results=shown,
        next_after=next_after,
        after=after,
        outcome=chosen or "",
        q=q.strip(),
        baseline=baseline,
        picked=picked,
        metrics=_metric_columns(picked or _own(cards), shown),
        names=people(page),
    )


def _own(cards: list[Scorecard]) -> Scorecard | None:
    """The run's own scorecard among ``cards`` (the one that is no rescore)."""
    return next((c for c in cards if c.rescore_of is None), None)


def _metric_columns(card: Scorecard | None, results: list[Any]) -> list[str]:
    """The per-case table's metric columns: the scorecard's metrics (else the page's), at
    most :data:`METRIC_COLUMNS`."""
    names = list(card.metrics) if card is not None else []
    for r in results:
        names += [s.metric for s in r.scores if s.metric not in names]
    return names[:METRIC_COLUMNS]


@router.get("/runs/{run_id:runid}/cases/{case_id:path}")
def case_page(
    request: Request,
    page: PageDep,
    run_id: str,
    case_id: str,
    sample: int = 0,
    id_query: Annotated[str, Query(alias="id")] = "",
    scorecard: str = "",
) -> Response:
    """One (case, sample) of a run: task, answer, messages, tool calls, the environment
    snapshot (diff, files, screenshot), output tails and every score with its reasoning —
    under one of the run's scorecards (the picker; its own by default), each judge's request
    and raw reply with its tokens, cost and latency — beside the case's gold (which the
    harness never saw)."""
    case_id = case_id or id_query
    if not case_id:
        raise NotFound(f"no case id given for run {run_id}")
    run_results.check_sample(sample)
    run = runs.get_run(page.ctx, run_id)
    cards = scorecards.list_scorecards(page.ctx, run_id) if run.status in TERMINAL else []
    cards = sorted(cards, key=lambda c: (c.created_at, c.rescore_of is not None), reverse=True)
    picked = next((c for c in cards if c.id == scorecard), None)
    result = run_results.get_run_result(
        page.ctx, run_id, case_id, sample, picked.id if picked else None
    )
    dataset_id, _, version = run.dataset.rpartition("@")
    case = None
    gold_missing = ""
    try:
        case = datasets.get_case(page.ctx, dataset_id, version, case_id)
    except NotFound as exc:  # the version was deleted after the run: the trace stays
        gold_missing = exc.message
    return render(
        request,
        page,
        "run_case.html",
        nav="runs",
        run=run,
        result=result,
        trace=result.trace,
        cards=cards,
        picked=picked,
        case=case,
        gold_missing=gold_missing,
        dataset_id=dataset_id,
        version=version,
        diff_lines=_diff_lines(result.trace.env_snapshot.diff if result.trace else None),
        turns=conversation(result.trace) if result.trace and is_conversation(result.trace) else [],
    )


DIFF_LINES = 4000


def _diff_lines(diff: str | None) -> list[tuple[str, str]]:
    """``(css class, line)`` for a unified diff's first :data:`DIFF_LINES` lines: ``add``,
    ``del``, ``hunk``, ``meta`` (a header line) or ``ctx`` (:func:`render.patch_lines`)."""
    if not diff:
        return []
    return [("meta" if k == "file" else k, line) for k, line in patch_lines(diff, DIFF_LINES)]
