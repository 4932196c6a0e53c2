"""Secret routes (SPEC C, D): write-only secrets, user- or workspace-scoped.

``PUT /api/secrets/{scope}/{name}`` stores a value; no route ever returns one — ``GET`` lists
names and metadata only. ``user`` scope is the caller's own (any member); ``workspace`` scope
needs ``secrets:read|write`` (admins). Each ``operation_id`` is the service function's name.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Response
from pydantic import Field

from benchbook.api.deps import ContextDep, RequestBody
from benchbook.api.errors import error_responses
from benchbook.contracts.accounts import SecretInfo, SecretScope
from benchbook.contracts.common import schema_rule
from benchbook.services import secrets as svc
from benchbook.transports.limits import body_limit

router = APIRouter(prefix="/api/secrets", tags=["secrets"])

SECRET_BODY_BYTES = 8 * svc.MAX_VALUE_BYTES
"""Bound of a secret request: a 64 KiB value even when JSON-escaped byte by byte."""


SecretNameParam = Annotated[
    str, Path(json_schema_extra={"pattern": svc.NAME_RE.pattern}, description="The name.")
]


class SecretValue(RequestBody):
    """Body of ``PUT /api/secrets/{scope}/{name}``: the value (1 byte to 64 KiB of UTF-8)."""

    value: Annotated[str, schema_rule(minLength=1)] = Field(
        description="1-65,536 bytes (UTF-8); stored encrypted; never returned by any route."
    )
    hosts: Annotated[
        list[Annotated[str, schema_rule(pattern=svc.HOST_RE.pattern)]], schema_rule(maxItems=32)
    ] = Field(
        default_factory=list,
        description="Model endpoint hosts the value may be sent to (api.example.org or"
        " host:port); none: never sent to a model endpoint.",
    )


@router.get(
    "",
    operation_id="list_secrets",
    response_model=list[SecretInfo],
    responses=error_responses(403),
)
def list_secrets(
    ctx: ContextDep,
    scope: Annotated[SecretScope | None, Query(description="user or workspace; omit for both")] = (
        None
    ),
) -> list[SecretInfo]:
    """Names and metadata of the caller's own secrets and (admins) the workspace's; never
    values."""
    return svc.list_secrets(ctx, scope)


@router.put(
    "/{scope}/{name}",
    operation_id="set_secret",
    response_model=SecretInfo,
    responses=error_responses(400, 403, 413),
    openapi_extra=body_limit(SECRET_BODY_BYTES),
)
def set_secret(
    ctx: ContextDep, scope: SecretScope, name: SecretNameParam, body: SecretValue
) -> SecretInfo:
    """Create or replace a secret; answers its name and metadata, not the value. 400 for a bad
    name (``[A-Za-z_][A-Za-z0-9_.-]{0,127}``) or an empty or over-64-KiB value."""
    return svc.set_secret(ctx, name, body.value, scope, body.hosts)


@router.delete(
    "/{scope}/{name}",
    operation_id="delete_secret",
    status_code=204,
    response_class=Response,
    responses=error_responses(403, 404),
)
def delete_secret(ctx: ContextDep, scope: SecretScope, name: SecretNameParam) -> Response:
    """Delete a secret; 404 when the scope holds none of that name."""
    svc.delete_secret(ctx, name, scope)
    return Response(status_code=204)
