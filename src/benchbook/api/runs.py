"""Run and scorecard routes (SPEC H.4, H.6, H.8).

``POST /api/runs`` returns at once with the run ``queued``; the worker inside
``benchbook serve`` executes it. Each route's ``operation_id`` is the service function's name.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Query
from fastapi.responses import StreamingResponse
from pydantic import Field
from starlette.concurrency import run_in_threadpool

from benchbook.api.datasets import VERSION_TAG_PATTERN
from benchbook.api.deps import ContextDep, RequestBody
from benchbook.api.errors import error_responses
from benchbook.api.streaming import read_ahead
from benchbook.contracts.common import schema_rule
from benchbook.contracts.comparison import Comparison
from benchbook.contracts.dataset import RunGrader
from benchbook.contracts.run import (
    MAX_REPEATS,
    CaseResult,
    ReportRunRequest,
    ResultFilter,
    Run,
    StartRunRequest,
    Trace,
)
from benchbook.contracts.scorecard import Scorecard
from benchbook.datasets.versions import MAX_TAGS_PER_VERSION
from benchbook.services import comparisons
from benchbook.services import run_exports as exports
from benchbook.services import run_reports as reports
from benchbook.services import run_results as results
from benchbook.services import runs as svc
from benchbook.services import scorecards as cards
from benchbook.services.run_exports import RunExportFormat

router = APIRouter(prefix="/api", tags=["runs"])


@router.post(
    "/runs",
    operation_id="start_run",
    status_code=202,
    response_model=Run,
    responses=error_responses(400, 403, 404, 409),
)
def start_run(ctx: ContextDep, request: Annotated[StartRunRequest, Body()]) -> Run:
    """Plan a run and queue it (202); poll ``GET /api/runs/{id}``. 400 for unknown graders
    (known ids listed) or a missing secret; 404 for an unknown dataset or harness version; 409
    for a subset that selects no case of the dataset version."""
    return svc.start_run(ctx, request)


@router.post(
    "/runs/report",
    operation_id="report_run",
    status_code=201,
    response_model=Run,
    responses=error_responses(400, 403, 404, 409),
)
async def report_run(ctx: ContextDep, request: Annotated[ReportRunRequest, Body()]) -> Run:
    """Grade results an external harness produced (``harness: "id@version"``, rows ``{case_id,
    answer, sample?, error?, trace?}``): 201 with the finished run and its scorecard. 404 for an
    unknown dataset or case id, 400 for a repeated (case, sample), each named by row
    (``results.3.case_id``)."""
    return await run_in_threadpool(reports.report_run, ctx, request)


@router.get(
    "/runs",
    operation_id="list_runs",
    response_model=list[Run],
    responses=error_responses(400, 404),
)
def list_runs(
    ctx: ContextDep,
    dataset: Annotated[str | None, Query(description="Dataset id or id@version.")] = None,
    harness: Annotated[str | None, Query(description="Harness id or id@version.")] = None,
    status: Annotated[str | None, Query(description="One run status.")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    before: Annotated[
        str | None, Query(description="Id of the previous page's last run (keyset).")
    ] = None,
) -> list[Run]:
    """The workspace's runs, newest first; page with ``before`` = the last run's id."""
    return svc.list_runs(ctx, dataset, harness, status, limit, before)


@router.get(
    "/runs/{run_id}", operation_id="get_run", response_model=Run, responses=error_responses(404)
)
def get_run(ctx: ContextDep, run_id: str) -> Run:
    """One run with its counts and pass rate so far."""
    return svc.get_run(ctx, run_id)


AfterQuery = Annotated[
    str | None,
    Query(
        description="Cursor 'position:sample' (``next_after``).",
        json_schema_extra={"pattern": results.RESULTS_CURSOR_PATTERN},
    ),
]
OutcomeQuery = Annotated[
    ResultFilter | None,
    Query(
        description="passed, failed, errored, grader_error, not_run; regressed/fixed need a"
        " baseline."
    ),
]
BaselineQuery = Annotated[
    str | None, Query(description="Scorecard id, run id or tag (for regressed/fixed).")
]


@router.get(
    "/runs/{run_id}/results",
    operation_id="list_run_results",
    response_model=list[CaseResult],
    responses=error_responses(400, 404),
)
def list_run_results(
    ctx: ContextDep,
    run_id: str,
    after: AfterQuery = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    outcome: OutcomeQuery = None,
    search: Annotated[str | None, Query(description="Case-id substring.")] = None,
    baseline: BaselineQuery = None,
    scorecard: Annotated[
        str | None, Query(description="One of the run's scorecards (sc_…); default its own.")
    ] = None,
) -> list[CaseResult]:
    """A page of (case, sample) results in dataset order with one scorecard's scores (no
    traces), optionally filtered by outcome and a case-id search."""
    return results.list_run_results(ctx, run_id, after, limit, outcome, search, baseline, scorecard)


@router.get(
    "/scorecards/{scorecard_id}/results",
    operation_id="list_scorecard_results",
    response_model=list[CaseResult],
    responses=error_responses(400, 404),
)
def list_scorecard_results(
    ctx: ContextDep,
    scorecard_id: str,
    after: AfterQuery = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    outcome: OutcomeQuery = None,
    search: Annotated[str | None, Query(description="Case-id substring.")] = None,
    baseline: BaselineQuery = None,
) -> list[CaseResult]:
    """A page of one scorecard's (case, sample) results (a rescore's too) with its scores
    and verdicts, in dataset order; the same cursor and filters as the run's results."""
    return results.list_scorecard_results(
        ctx, scorecard_id, after, limit, outcome, search, baseline
    )


@router.get(
    "/runs/{run_id}/traces/{case_id:path}",
    operation_id="get_run_trace",
    response_model=Trace,
    responses=error_responses(400, 404, 413),
)
def get_run_trace(
    ctx: ContextDep,
    run_id: str,
    case_id: str,
    sample: Annotated[int, Query(ge=0, le=MAX_REPEATS - 1)] = 0,
) -> Trace:
    """The full trace of one (case, sample); 413 when its JSON is larger than
    ``BENCHBOOK_MAX_PAGE_BYTES`` (16 MiB): download it with ``export_run_trace``."""
    return results.get_run_trace(ctx, run_id, case_id, sample)


@router.get(
    "/runs/{run_id}/export",
    operation_id="export_run",
    response_class=StreamingResponse,
    responses={
        200: {
            "content": {"application/x-ndjson": {}, "text/csv": {}},
            "description": "one row per (case, sample)",
        },
        **error_responses(400, 404),
    },
)
def export_run(
    ctx: ContextDep,
    run_id: str,
    scorecard_id: Annotated[
        str | None, Query(description="Whose scores (default: the run's own scorecard).")
    ] = None,
    format: Annotated[RunExportFormat, Query(description="jsonl or csv.")] = "jsonl",
) -> StreamingResponse:
    """Stream one row per (case, sample): status, passed, answer, error, cost, tokens,
    latency and ``score.<metric>`` for every metric of the scorecard."""
    chunks = exports.export_run(ctx, run_id, scorecard_id, format)
    media = "text/csv" if format == "csv" else "application/x-ndjson"
    disposition = f'attachment; filename="{run_id}.{format}"'
    return StreamingResponse(
        read_ahead(chunks), media_type=media, headers={"Content-Disposition": disposition}
    )


@router.get(
    "/runs/{run_id}/trace-exports/{case_id:path}",
    operation_id="export_run_trace",
    response_class=StreamingResponse,
    responses={
        200: {"content": {"application/json": {}}, "description": "the trace's JSON"},
        **error_responses(400, 404),
    },
)
def export_run_trace(
    ctx: ContextDep,
    run_id: str,
    case_id: str,
    sample: Annotated[int, Query(ge=0, le=MAX_REPEATS - 1)] = 0,
) -> StreamingResponse:
    """Stream the trace of one (case, sample) as JSON, whatever its size (never held whole)."""
    chunks = results.export_run_trace(ctx, run_id, case_id, sample)
    name = f"{run_id}-{case_id.replace('/', '_')}-{sample}.json"
    return StreamingResponse(
        read_ahead(chunks),
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


@router.post(
    "/runs/{run_id}/cancel",
    operation_id="cancel_run",
    response_model=Run,
    responses=error_responses(403, 404),
)
def cancel_run(ctx: ContextDep, run_id: str) -> Run:
    """Ask a run to stop; in-flight cases finish and are kept."""
    return svc.cancel_run(ctx, run_id)


class BudgetRequest(RequestBody):
    """Body of resume and retry (optional): ``budget_usd``, a new spend cap (USD, ≥ 0) for
    the rest of the run."""

    budget_usd: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None


@router.post(
    "/runs/{run_id}/resume",
    operation_id="resume_run",
    response_model=Run,
    responses=error_responses(403, 404, 409),
)
def resume_run(ctx: ContextDep, run_id: str, body: BudgetRequest | None = None) -> Run:
    """Queue the run again: only (case, sample) pairs without a result run; ``budget_usd``
    sets a new spend cap for the rest of the run (recorded with who and when)."""
    return svc.resume_run(ctx, run_id, body.budget_usd if body else None)


@router.post(
    "/runs/{run_id}/retry",
    operation_id="retry_run",
    response_model=Run,
    responses=error_responses(403, 404, 409),
)
def retry_run(ctx: ContextDep, run_id: str, body: BudgetRequest | None = None) -> Run:
    """Queue the run's errored (case, sample) pairs again, into the same run; ``budget_usd``
    as for resume."""
    return svc.retry_run(ctx, run_id, body.budget_usd if body else None)


@router.post(
    "/runs/{run_id}/rescore",
    operation_id="rescore_run",
    response_model=Scorecard,
    responses=error_responses(400, 403, 404, 409),
)
async def rescore_run(
    ctx: ContextDep,
    run_id: str,
    graders: Annotated[list[RunGrader], Body(embed=True, json_schema_extra={"minItems": 1})],
    preflight: Annotated[bool, Body(embed=True)] = True,
) -> Scorecard:
    """Grade the run's saved traces under another plan (no harness call): a new scorecard.
    400 for an unknown grader id or config key, or a judge without base_url/model; 502 when
    ``preflight`` and a judge endpoint does not answer (nothing stored)."""
    return await run_in_threadpool(cards.rescore_run, ctx, run_id, graders, preflight)


@router.get(
    "/runs/{run_id}/scorecards",
    operation_id="list_scorecards",
    response_model=list[Scorecard],
    responses=error_responses(404),
)
def list_scorecards(ctx: ContextDep, run_id: str) -> list[Scorecard]:
    """The run's scorecards: its own first, then rescores."""
    return cards.list_scorecards(ctx, run_id)


#: A scorecard tag: a version tag (``VERSION_TAG_PATTERN``) not shaped like an id.
SCORECARD_TAG_PATTERN = (
    "^(?!\\s*(?:" + "|".join(cards.ID_PREFIXES) + "))" + VERSION_TAG_PATTERN.removeprefix("^")
)


class ScorecardTagsRequest(RequestBody):
    """Body of ``PUT /api/scorecards/{id}/tags``: the complete tag list (replaces the current)."""

    tags: Annotated[
        list[Annotated[str, schema_rule(pattern=SCORECARD_TAG_PATTERN)]],
        schema_rule(maxItems=MAX_TAGS_PER_VERSION),
    ]


@router.get(
    "/scorecards/compare",
    operation_id="compare_scorecards",
    response_model=Comparison,
    responses=error_responses(400, 404),
)
def compare_scorecards(
    ctx: ContextDep,
    baseline: Annotated[
        str, Query(description="Scorecard id, run id, or a scorecard tag of the same dataset.")
    ],
    candidate: Annotated[str, Query(description="Scorecard id or run id.")],
    seed: Annotated[int, Query(ge=0, le=comparisons.MAX_SEED)] = 0,
    resamples: Annotated[int, Query(ge=1, le=comparisons.MAX_RESAMPLES)] = 10_000,
) -> Comparison:
    """Baseline vs candidate pair by pair (SPEC H.7): transitions, the pass-rate delta with a
    paired bootstrap interval, McNemar's exact p, metric/cost/token/latency deltas;
    ``comparable: false`` with reasons when dataset or grader hashes differ. 400 for scorecards
    of different datasets; 404 for an unknown (or another workspace's) scorecard, run or tag."""
    return comparisons.compare_scorecards(ctx, baseline, candidate, seed, resamples)


@router.put(
    "/scorecards/{scorecard_id}/tags",
    operation_id="set_scorecard_tags",
    response_model=Scorecard,
    responses=error_responses(400, 403, 404, 409),
)
def set_scorecard_tags(ctx: ContextDep, scorecard_id: str, body: ScorecardTagsRequest) -> Scorecard:
    """Replace a scorecard's movable tags (``baseline``, ``prod``); a tag held by another
    scorecard of the same dataset moves here. 409 when the run is not ``finished``."""
    return cards.set_scorecard_tags(ctx, scorecard_id, body.tags)


@router.get(
    "/scorecards/{scorecard_id}",
    operation_id="get_scorecard",
    response_model=Scorecard,
    responses=error_responses(404),
)
def get_scorecard(ctx: ContextDep, scorecard_id: str) -> Scorecard:
    """One scorecard (a running run's is computed on the fly)."""
    return cards.get_scorecard(ctx, scorecard_id)
