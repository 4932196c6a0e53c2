"""Localization bridge routes (SPEC I): the upstream ContextBench scorer's inputs and its
numbers beside ours, SWE-bench predictions, the harness and its report.

Each route's ``operation_id`` is the service function's name. The scorer and the harness run
subprocesses, so their routes run in the thread pool.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query
from pydantic import BaseModel, ConfigDict, JsonValue
from starlette.concurrency import run_in_threadpool

from benchbook.api.deps import ContextDep
from benchbook.api.errors import error_responses
from benchbook.contracts.common import NOT_BLANK_PATTERN, CaseId, IdRef, schema_rule
from benchbook.contracts.localization import (
    GoldLocations,
    LocalizationExport,
    SwebenchEvaluation,
    SwebenchPredictions,
    UpstreamComparison,
)
from benchbook.contracts.scorecard import Scorecard
from benchbook.services import gold_locations, swebench
from benchbook.services import localization as svc

#: A SWE-bench harness report: at least one instance, each an object with a boolean
#: ``resolved`` (``services.swebench``).
SWEBENCH_REPORT_RULE: dict[str, Any] = {
    "minProperties": 1,
    "additionalProperties": {
        "type": "object",
        "required": ["resolved"],
        "properties": {"resolved": {"type": "boolean"}},
    },
}

router = APIRouter(prefix="/api/runs/{run_id}", tags=["localization"])
SAMPLE = Annotated[int, Query(ge=0, description="Which repeat (one row per instance).")]


@router.get(
    "/localization/export",
    operation_id="export_localization_run",
    response_model=LocalizationExport,
    responses=error_responses(403, 404),
)
def export_localization_run(ctx: ContextDep, run_id: str, sample: SAMPLE = 0) -> LocalizationExport:
    """The upstream ContextBench scorer's gold and prediction rows for the run."""
    return svc.export_localization_run(ctx, run_id, sample)


@router.post(
    "/localization/upstream",
    operation_id="score_localization_upstream",
    response_model=UpstreamComparison,
    responses=error_responses(400, 403, 404),
)
async def score_localization_upstream(
    ctx: ContextDep,
    run_id: str,
    scorer_cmd: Annotated[str | None, Body(embed=True)] = None,
    sample: Annotated[int, Body(embed=True, ge=0)] = 0,
    timeout_s: Annotated[float, Body(embed=True, gt=0)] = svc.DEFAULT_SCORER_TIMEOUT_S,
) -> UpstreamComparison:
    """Run the upstream scorer on the run; its numbers beside ours, differences flagged.
    403 for a ``scorer_cmd`` from a caller who is not an installation admin."""
    return await run_in_threadpool(
        svc.score_localization_upstream, ctx, run_id, scorer_cmd, sample, timeout_s
    )


@router.get(
    "/swebench/predictions",
    operation_id="export_swebench_predictions",
    response_model=SwebenchPredictions,
    responses=error_responses(403, 404),
)
def export_swebench_predictions(
    ctx: ContextDep,
    run_id: str,
    model_name_or_path: Annotated[str | None, Query(description="Default: the harness.")] = None,
    sample: SAMPLE = 0,
) -> SwebenchPredictions:
    """The run as official SWE-bench predictions (the patch = the run's repository diff)."""
    return swebench.export_swebench_predictions(ctx, run_id, model_name_or_path, sample)


@router.post(
    "/swebench/report",
    operation_id="import_swebench_report",
    response_model=Scorecard,
    responses=error_responses(400, 403, 404, 409),
)
async def import_swebench_report(
    ctx: ContextDep,
    run_id: str,
    report: Annotated[
        dict[str, JsonValue], Body(embed=True, json_schema_extra=SWEBENCH_REPORT_RULE)
    ],
    sample: Annotated[int, Body(embed=True, ge=0)] = 0,
) -> Scorecard:
    """Import a SWE-bench harness report as ``swe-bench`` scores: a new scorecard. 400 names a
    malformed field or an instance not in the run; nothing is stored then."""
    return await run_in_threadpool(swebench.import_swebench_report, ctx, run_id, report, sample)


@router.post(
    "/swebench/evaluate",
    operation_id="evaluate_swebench_run",
    response_model=SwebenchEvaluation,
    responses=error_responses(400, 403, 404),
)
async def evaluate_swebench_run(
    ctx: ContextDep,
    run_id: str,
    dataset_name: Annotated[str, Body(embed=True)] = "princeton-nlp/SWE-bench_Lite",
    max_workers: Annotated[int, Body(embed=True, ge=1, le=64)] = 4,
    timeout_s: Annotated[float, Body(embed=True, gt=0)] = swebench.DEFAULT_HARNESS_TIMEOUT_S,
) -> SwebenchEvaluation:
    """Run the official SWE-bench harness on the run and import its report (``unavailable``
    without Docker or the swebench package)."""
    return await run_in_threadpool(
        swebench.evaluate_swebench_run, ctx, run_id, dataset_name, max_workers, timeout_s
    )


gold_router = APIRouter(prefix="/api/localization", tags=["localization"])


class GoldOfCase(BaseModel):
    """A case: ``dataset`` (``id`` or ``id@version``) and its ``case_id``."""

    model_config = ConfigDict(extra="forbid")
    dataset: IdRef
    case_id: CaseId


class GoldOfPatch(BaseModel):
    """A unified diff alone (``patch``): lines, no definitions."""

    model_config = ConfigDict(extra="forbid")
    patch: Annotated[str, schema_rule(pattern=NOT_BLANK_PATTERN)]


@gold_router.post(
    "/gold",
    operation_id="derive_gold_locations",
    responses=error_responses(400, 401, 403, 404, 409),
)
def derive_gold_locations(ctx: ContextDep, body: GoldOfCase | GoldOfPatch) -> GoldLocations:
    """The gold locations Benchbook derives from a case's patch or a given patch (SPEC I).
    The body is a case or a patch, never both (the document's ``anyOf`` says so)."""
    if isinstance(body, GoldOfPatch):
        return gold_locations.derive_gold_locations(ctx, patch=body.patch)
    return gold_locations.derive_gold_locations(ctx, body.dataset, body.case_id)
