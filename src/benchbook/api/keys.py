"""API key routes (SPEC C): create (the key is shown once), list, revoke.

Keys belong to one user in the caller's workspace; admins may create, list and revoke other
members' keys. Each route's ``operation_id`` is the service function's name.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import Field

from benchbook.api.deps import ContextDep, RequestBody
from benchbook.api.errors import error_responses
from benchbook.contracts.accounts import ApiKeyInfo, CreatedApiKey, KeyScope
from benchbook.contracts.common import schema_rule
from benchbook.services import keys as svc
from benchbook.transports.limits import body_limit

router = APIRouter(prefix="/api/keys", tags=["keys"])

KEY_BODY_BYTES = 16 * 1024
"""Bound of a key request (a name, a scope and a user)."""


class KeyRequest(RequestBody):
    """Body of ``POST /api/keys``."""

    name: Annotated[str, schema_rule(minLength=1, maxLength=100)] = Field(
        description="1-100 characters, e.g. 'ci' or 'laptop'."
    )
    scope: KeyScope = Field(default="write", description="read, write or admin (≤ owner's role).")
    user: str | None = Field(default=None, description="Owner's email or id (admins); omit: you.")


@router.post(
    "",
    operation_id="create_api_key",
    status_code=201,
    response_model=CreatedApiKey,
    responses=error_responses(400, 403, 404, 413),
    openapi_extra=body_limit(KEY_BODY_BYTES),
)
def create_api_key(ctx: ContextDep, request: KeyRequest) -> CreatedApiKey:
    """Create a key; ``key`` (``bb_…``) is in this response only and is stored hashed."""
    return svc.create_api_key(ctx, request.name, request.scope, request.user)


@router.get(
    "",
    operation_id="list_api_keys",
    response_model=list[ApiKeyInfo],
    responses=error_responses(403),
)
def list_api_keys(
    ctx: ContextDep,
    all_users: Annotated[bool, Query(description="Every member's keys (admins).")] = False,
) -> list[ApiKeyInfo]:
    """The caller's keys here, newest first, with ``last_used_at`` and ``revoked_at``."""
    return svc.list_api_keys(ctx, all_users)


@router.post(
    "/{key_id}/revoke",
    operation_id="revoke_api_key",
    response_model=ApiKeyInfo,
    responses=error_responses(403, 404),
)
def revoke_api_key(ctx: ContextDep, key_id: str) -> ApiKeyInfo:
    """Revoke a key (own, or any member's for admins): its next request is 401. Idempotent."""
    return svc.revoke_api_key(ctx, key_id)
