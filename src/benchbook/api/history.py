"""A case's history across runs and a run's flaky cases (issue 30 §2): ``GET
/api/datasets/{dataset_id}/case-results`` (``list_case_results``) and ``GET
/api/runs/{run_id}/flaky`` (``list_flaky_cases``). The case id travels as a query parameter:
case ids may hold ``/``."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from benchbook.api.deps import ContextDep
from benchbook.api.errors import error_responses
from benchbook.contracts.history import CaseHistoryPage, FlakyCase
from benchbook.services import history as svc
from benchbook.services.history import CURSOR

router = APIRouter(prefix="/api", tags=["runs"])


@router.get(
    "/datasets/{dataset_id}/case-results",
    operation_id="list_case_results",
    response_model=CaseHistoryPage,
    responses=error_responses(400, 404),
)
def list_case_results(
    ctx: ContextDep,
    dataset_id: str,
    case_id: Annotated[str, Query(description="The case id.")],
    before: Annotated[
        str | None,
        Query(
            description="Cursor 'run_…:sample' (next_before).",
            json_schema_extra={"pattern": f"^{CURSOR.pattern}$"},
        ),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> CaseHistoryPage:
    """Every result of one case over the workspace's runs of the dataset, newest run first."""
    return svc.list_case_results(ctx, dataset_id, case_id, before, limit)


@router.get(
    "/runs/{run_id}/flaky",
    operation_id="list_flaky_cases",
    response_model=list[FlakyCase],
    responses=error_responses(404),
)
def list_flaky_cases(ctx: ContextDep, run_id: str) -> list[FlakyCase]:
    """The run's cases whose verdict differs across its samples or its harness@version's
    other runs on the same dataset version."""
    return svc.list_flaky_cases(ctx, run_id)
