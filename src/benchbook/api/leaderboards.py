"""The leaderboard route: ``GET /api/datasets/{dataset_id}/leaderboard`` (operation
``get_leaderboard``), the finished scorecards of one dataset version ranked per grader plan."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from benchbook.api.deps import ContextDep
from benchbook.api.errors import error_responses
from benchbook.contracts.leaderboard import Leaderboard, LeaderboardSelect, LeaderboardSort
from benchbook.services import leaderboards as svc
from benchbook.services.leaderboards import MAX_FILTER

router = APIRouter(prefix="/api/datasets", tags=["runs"])


@router.get(
    "/{dataset_id}/leaderboard",
    operation_id="get_leaderboard",
    response_model=Leaderboard,
    responses=error_responses(400, 404),
)
def get_leaderboard(
    ctx: ContextDep,
    dataset_id: str,
    version: Annotated[str, Query(description="SemVer, a version tag or latest.")] = "latest",
    select: Annotated[
        LeaderboardSelect, Query(description="latest, best or all scorecards per harness.")
    ] = "latest",
    sort: Annotated[LeaderboardSort, Query(description="pass_rate, cost, date or harness.")] = (
        "pass_rate"
    ),
    tag: Annotated[
        str | None, Query(description="Only scorecards with this tag.", max_length=MAX_FILTER)
    ] = None,
    plan: Annotated[
        str | None,
        Query(description="Only plan hashes starting with this.", max_length=MAX_FILTER),
    ] = None,
    include_partial: Annotated[
        bool,
        Query(description="Also show runs over a subset of the cases, grouped apart."),
    ] = False,
) -> Leaderboard:
    """One row per harness@version on a dataset version: pass rate with its Wilson interval,
    pass@k, cost per case, tokens, latency; grouped by grader plan, frontier marked."""
    return svc.get_leaderboard(ctx, dataset_id, version, select, sort, tag, plan, include_partial)
