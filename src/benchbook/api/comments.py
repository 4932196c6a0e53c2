"""Comment routes (SPEC A Comment, SPEC D): list, create and delete comments on a resource.

Comments belong to the caller's workspace and hang off one resource (``resource_type`` +
``resource_id``, e.g. ``dataset`` + ``arith``); replies name their parent in ``parent_id``.
Each route's ``operation_id`` is the service function's name (``services.registry``).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Response
from pydantic import Field

from benchbook.api.deps import ContextDep, RequestBody
from benchbook.api.errors import error_responses
from benchbook.contracts.comment import MAX_COMMENT_CHARS, Comment, CommentableType
from benchbook.contracts.common import schema_rule
from benchbook.services import comments as svc
from benchbook.services.bounds import INT64_MAX
from benchbook.transports.limits import body_limit

router = APIRouter(prefix="/api/comments", tags=["comments"])

COMMENT_BODY_BYTES = 128 * 1024
_SOLID = r"[^\s\x00\x1c-\x1f\x85]"
BODY_PATTERN = rf"^\s*{_SOLID}(?:[^\x00]{{0,{MAX_COMMENT_CHARS - 2}}}{_SOLID})?\s*$"
"""A comment body: 1-10,000 characters once surrounding whitespace is trimmed."""
CommentId = Annotated[
    int, Path(json_schema_extra={"minimum": 1, "exclusiveMaximum": INT64_MAX + 1})
]
"""Bound of a comment request: 10,000 characters even when every one is a JSON escape."""


class CommentRequest(RequestBody):
    """Body of ``POST /api/comments``: the resource, the text and optionally the parent."""

    resource_type: CommentableType
    resource_id: str = Field(description="The resource's id, e.g. a dataset id.")
    body: Annotated[str, schema_rule(pattern=BODY_PATTERN)] = Field(
        description="1-10,000 characters after trimming."
    )
    parent_id: Annotated[int, schema_rule(minimum=1, exclusiveMaximum=INT64_MAX + 1)] | None = (
        Field(default=None, description="The comment replied to (404 when not on this resource).")
    )


@router.get(
    "",
    operation_id="list_comments",
    response_model=list[Comment],
    responses=error_responses(400, 404),
)
def list_comments(
    ctx: ContextDep,
    resource_type: Annotated[CommentableType, Query(description="dataset")],
    resource_id: Annotated[str, Query(description="The resource's id.")],
) -> list[Comment]:
    """The workspace's comments on one resource, oldest first (replies carry ``parent_id``).
    404 when the resource is not visible to the caller."""
    return svc.list_comments(ctx, resource_type, resource_id)


@router.post(
    "",
    operation_id="create_comment",
    status_code=201,
    response_model=Comment,
    responses=error_responses(400, 403, 404, 413),
    openapi_extra=body_limit(COMMENT_BODY_BYTES),
)
def create_comment(ctx: ContextDep, request: CommentRequest) -> Comment:
    """Comment on a visible resource (``comments:write``: members and admins); 400 for an empty
    or over-long body or a ``parent_id`` that is not a comment on the same resource."""
    return svc.create_comment(
        ctx, request.resource_type, request.resource_id, request.body, request.parent_id
    )


@router.delete(
    "/{comment_id}",
    operation_id="delete_comment",
    status_code=204,
    response_class=Response,
    responses=error_responses(403, 404),
)
def delete_comment(ctx: ContextDep, comment_id: CommentId) -> Response:
    """Delete a comment and its replies: its author or an admin (else 403); 404 when it is in
    another workspace or already deleted."""
    svc.delete_comment(ctx, comment_id)
    return Response(status_code=204)
