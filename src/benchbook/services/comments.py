"""Comments (SPEC A Comment, SPEC D): list oldest first, create, delete; replies via
``parent_id``. Comments are private to the commenter's workspace, also on ``_shared`` datasets.

Each resource type has an existence check in :data:`RESOURCE_CHECKS`; a resource the caller
cannot see is NotFound. Recipes, runs and scorecards add their check when their services land;
until then commenting on them is InvalidInput.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Connection

from benchbook.contracts.comment import MAX_COMMENT_CHARS, Comment, ResourceType
from benchbook.errors import Forbidden, InvalidInput, NotFound
from benchbook.services.bounds import bounded_int
from benchbook.services.context import Context
from benchbook.services.controls import may_delete_comment
from benchbook.services.resolve import resolve_owner
from benchbook.store import comments as repo

RESOURCE_TYPES: tuple[ResourceType, ...] = ("dataset", "recipe", "run", "scorecard")


def _dataset_exists(conn: Connection, workspace: str, dataset_id: str) -> None:
    resolve_owner(conn, workspace, dataset_id)


#: resource type → check raising NotFound when the caller's workspace cannot see the resource.
RESOURCE_CHECKS: dict[str, Callable[[Connection, str, str], None]] = {
    "dataset": _dataset_exists,
}


def _bad(path: str, message: str) -> InvalidInput:
    return InvalidInput(f"{path}: {message}", {"errors": [{"path": path, "message": message}]})


def _check_resource(conn: Connection, ctx: Context, resource_type: str, resource_id: str) -> None:
    if resource_type not in RESOURCE_TYPES:
        raise _bad("resource_type", f"must be one of {', '.join(RESOURCE_TYPES)}")
    check = RESOURCE_CHECKS.get(resource_type)
    if check is None:
        raise _bad("resource_type", f"comments on {resource_type}s are not available yet")
    check(conn, ctx.workspace, resource_id)


def _comment(row: repo.CommentRow) -> Comment:
    return Comment.model_validate(row, from_attributes=True)


def list_comments(ctx: Context, resource_type: ResourceType, resource_id: str) -> list[Comment]:
    """Comments of the caller's workspace on one resource, oldest first (replies included;
    thread them by ``parent_id``). Raises NotFound when the resource is not visible.
    """
    ctx.require("comments:read")
    with ctx.engine.connect() as conn:
        _check_resource(conn, ctx, resource_type, resource_id)
        return [
            _comment(r) for r in repo.list_comments(conn, ctx.workspace, resource_type, resource_id)
        ]


def create_comment(
    ctx: Context,
    resource_type: ResourceType,
    resource_id: str,
    body: str,
    parent_id: int | None = None,
) -> Comment:
    """Add a comment (or a reply to ``parent_id``) to a visible resource.

    ``body`` is trimmed and must then hold 1–10,000 characters (InvalidInput, path ``body``);
    ``parent_id`` must name a live comment on the same resource (InvalidInput, path
    ``parent_id``). NotFound when the resource is not visible.
    """
    ctx.require("comments:write")
    if parent_id is not None:
        bounded_int(parent_id, "parent_id", low=1)
    text = body.strip()
    if not text:
        raise _bad("body", "must not be empty")
    if len(text) > MAX_COMMENT_CHARS:
        raise _bad("body", f"must be at most {MAX_COMMENT_CHARS} characters, not {len(text)}")
    with ctx.engine.begin() as conn:
        _check_resource(conn, ctx, resource_type, resource_id)
        if parent_id is not None:
            parent = repo.find_comment(conn, ctx.workspace, parent_id)
            if parent is None or (parent.resource_type, parent.resource_id) != (
                resource_type,
                resource_id,
            ):
                message = f"no comment {parent_id} on this {resource_type}"
                raise NotFound(message, {"errors": [{"path": "parent_id", "message": message}]})
        row = repo.insert_comment(
            conn,
            workspace=ctx.workspace,
            resource_type=resource_type,
            resource_id=resource_id,
            parent_id=parent_id,
            author=ctx.principal.user_id,
            body=text,
        )
    return _comment(row)


def delete_comment(ctx: Context, comment_id: int) -> None:
    """Delete a comment and the replies below it.

    The author or an admin (``comments:delete``) may delete; anyone else gets Forbidden, and
    so does a viewer (read-only, even an author demoted later). A comment of another
    workspace, or already deleted, is NotFound.
    """
    ctx.require("comments:write")
    bounded_int(comment_id, "comment_id", low=1)
    with ctx.engine.begin() as conn:
        row = repo.find_comment(conn, ctx.workspace, comment_id)
        if row is None:
            raise NotFound(f"comment {comment_id} not found", {"id": comment_id})
        if not may_delete_comment(ctx, row.author):
            raise Forbidden("only the author or an admin may delete a comment", {"id": comment_id})
        repo.soft_delete(
            conn, repo.thread_ids(conn, ctx.workspace, comment_id), ctx.principal.user_id
        )
