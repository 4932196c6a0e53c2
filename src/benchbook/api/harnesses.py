"""Harness routes (SPEC H.1): register, list, get and delete harness versions.

Each route's ``operation_id`` is the service function's name (``services.registry.OPERATIONS``).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Query, Response

from benchbook.api.deps import ContextDep
from benchbook.api.errors import error_responses
from benchbook.contracts.harness import Harness, HarnessRegisterResult, HarnessSummary
from benchbook.services import harnesses as svc

router = APIRouter(prefix="/api/harnesses", tags=["harnesses"])

Shared = Annotated[bool, Query(description="Write into the _shared tier (installation admins).")]


@router.post(
    "",
    operation_id="register_harness",
    status_code=201,
    response_model=HarnessRegisterResult,
    responses={
        200: {"model": HarnessRegisterResult, "description": "identical version existed"},
        **error_responses(400, 403, 409),
    },
)
def register_harness(
    ctx: ContextDep, response: Response, harness: Annotated[Harness, Body()], shared: Shared = False
) -> HarnessRegisterResult:
    """Register a harness version (admins only: a harness is code the server runs): 201 when
    stored, 200 when the identical version existed, 409 naming ``id@version`` on different
    content, 400 for an invalid config (unknown template fields included)."""
    result = svc.register_harness(ctx, harness, shared)
    if not result.created:
        response.status_code = 200
    return result


@router.get("", operation_id="list_harnesses", response_model=list[HarnessSummary])
def list_harnesses(
    ctx: ContextDep,
    search: Annotated[str | None, Query(description="Substring of id or description.")] = None,
) -> list[HarnessSummary]:
    """Harnesses the caller sees: own ids plus ``_shared`` ids not shadowed by own ones."""
    return svc.list_harnesses(ctx, search)


@router.get(
    "/{harness_id}/versions/{version}",
    operation_id="get_harness",
    response_model=Harness,
    responses=error_responses(404),
)
def get_harness(ctx: ContextDep, harness_id: str, version: str) -> Harness:
    """One harness version (exact SemVer or ``latest``)."""
    return svc.get_harness(ctx, harness_id, version)


@router.delete(
    "/{harness_id}/versions/{version}",
    operation_id="delete_harness_version",
    response_model=HarnessRegisterResult,
    responses=error_responses(403, 404),
)
def delete_harness_version(ctx: ContextDep, harness_id: str, version: str) -> HarnessRegisterResult:
    """Tombstone one exact version of your workspace; runs that used it stay readable."""
    return svc.delete_harness_version(ctx, harness_id, version)
