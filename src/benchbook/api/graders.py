"""Registered grader and environment recipe routes (issue 27 item 2): register, list, get and
delete versions. Admins register (a grader or recipe is code the server runs); members name
them from plans and cases. Each ``operation_id`` is the service function's name.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Query, Response

from benchbook.api.deps import ContextDep
from benchbook.api.errors import error_responses
from benchbook.contracts.registered import (
    EnvironmentRecipe,
    RegisteredGrader,
    RegisteredSummary,
    RegisterResult,
)
from benchbook.services import environments as env_svc
from benchbook.services import graders as svc

router = APIRouter(prefix="/api", tags=["graders"])

Shared = Annotated[bool, Query(description="Write into the _shared tier (installation admins).")]
Search = Annotated[str | None, Query(description="Substring of id or description.")]
REGISTERED = {
    200: {"model": RegisterResult, "description": "identical version existed"},
    **error_responses(400, 403, 409),
}


@router.post(
    "/graders",
    operation_id="register_grader",
    status_code=201,
    response_model=RegisterResult,
    responses=REGISTERED,
)
def register_grader(
    ctx: ContextDep,
    response: Response,
    grader: Annotated[RegisteredGrader, Body()],
    shared: Shared = False,
) -> RegisterResult:
    """Register a grader version (admins only): 201 when stored, 200 when the identical
    version existed, 409 on different content."""
    result = svc.register_grader(ctx, grader, shared)
    if not result.created:
        response.status_code = 200
    return result


@router.get("/graders", operation_id="list_graders", response_model=list[RegisteredSummary])
def list_graders(ctx: ContextDep, search: Search = None) -> list[RegisteredSummary]:
    """Registered graders: own ids plus ``_shared`` ids not shadowed by own ones."""
    return svc.list_graders(ctx, search)


@router.get(
    "/graders/{grader_id}/versions/{version}",
    operation_id="get_grader",
    response_model=RegisteredGrader,
    responses=error_responses(404),
)
def get_grader(ctx: ContextDep, grader_id: str, version: str) -> RegisteredGrader:
    """One registered grader version (exact SemVer or ``latest``)."""
    return svc.get_grader(ctx, grader_id, version)


@router.delete(
    "/graders/{grader_id}/versions/{version}",
    operation_id="delete_grader_version",
    response_model=RegisterResult,
    responses=error_responses(403, 404),
)
def delete_grader_version(ctx: ContextDep, grader_id: str, version: str) -> RegisterResult:
    """Tombstone one exact version of your workspace."""
    return svc.delete_grader_version(ctx, grader_id, version)


@router.post(
    "/environments",
    operation_id="register_environment",
    status_code=201,
    response_model=RegisterResult,
    responses=REGISTERED,
)
def register_environment(
    ctx: ContextDep,
    response: Response,
    environment: Annotated[EnvironmentRecipe, Body()],
    shared: Shared = False,
) -> RegisterResult:
    """Register an environment recipe version (admins only): setup commands and an optional
    test command a repo case names as ``env.setup = "id@version"``."""
    result = env_svc.register_environment(ctx, environment, shared)
    if not result.created:
        response.status_code = 200
    return result


@router.get(
    "/environments", operation_id="list_environments", response_model=list[RegisteredSummary]
)
def list_environments(ctx: ContextDep, search: Search = None) -> list[RegisteredSummary]:
    """Environment recipes: own ids plus ``_shared`` ids not shadowed by own ones."""
    return env_svc.list_environments(ctx, search)


@router.get(
    "/environments/{environment_id}/versions/{version}",
    operation_id="get_environment",
    response_model=EnvironmentRecipe,
    responses=error_responses(404),
)
def get_environment(ctx: ContextDep, environment_id: str, version: str) -> EnvironmentRecipe:
    """One environment recipe version (exact SemVer or ``latest``)."""
    return env_svc.get_environment(ctx, environment_id, version)


@router.delete(
    "/environments/{environment_id}/versions/{version}",
    operation_id="delete_environment_version",
    response_model=RegisterResult,
    responses=error_responses(403, 404),
)
def delete_environment_version(
    ctx: ContextDep, environment_id: str, version: str
) -> RegisterResult:
    """Tombstone one exact version of your workspace."""
    return env_svc.delete_environment_version(ctx, environment_id, version)
