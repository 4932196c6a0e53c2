"""Comments repository: comments per ``(workspace, resource_type, resource_id)``.

Deletes are soft (``deleted_at``) so activity cursors that point at a comment stay valid; every
read here skips deleted comments.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, insert, or_, select, update

from benchbook.store.tables import comments, utcnow

_C = comments.c


@dataclass(frozen=True)
class CommentRow:
    """A stored, live comment."""

    id: int
    workspace: str
    resource_type: str
    resource_id: str
    parent_id: int | None
    author: str
    body: str
    created_at: datetime
    updated_at: datetime


_COLUMNS = (
    _C.id,
    _C.workspace,
    _C.resource_type,
    _C.resource_id,
    _C.parent_id,
    _C.author,
    _C.body,
    _C.created_at,
    _C.updated_at,
)


def _row(r: Any) -> CommentRow:
    return CommentRow(*r)


def insert_comment(
    conn: Connection,
    *,
    workspace: str,
    resource_type: str,
    resource_id: str,
    parent_id: int | None,
    author: str,
    body: str,
) -> CommentRow:
    """Store a comment and return it with its id."""
    now = utcnow()
    values = {
        "workspace": workspace,
        "resource_type": resource_type,
        "resource_id": resource_id,
        "parent_id": parent_id,
        "author": author,
        "body": body,
        "created_at": now,
        "updated_at": now,
    }
    new_id = conn.execute(insert(comments).values(**values).returning(_C.id)).scalar_one()
    return CommentRow(
        int(new_id), workspace, resource_type, resource_id, parent_id, author, body, now, now
    )


def find_comment(conn: Connection, workspace: str, comment_id: int) -> CommentRow | None:
    """A live comment of the workspace, or None."""
    q = select(*_COLUMNS).where(
        _C.workspace == workspace, _C.id == comment_id, _C.deleted_at.is_(None)
    )
    r = conn.execute(q).first()
    return _row(r) if r else None


def find_any_comment_time(conn: Connection, workspace: str, comment_id: int) -> datetime | None:
    """``created_at`` of a comment, deleted or not (for activity cursors), or None."""
    q = select(_C.created_at).where(_C.workspace == workspace, _C.id == comment_id)
    value: datetime | None = conn.scalar(q)
    return value


def list_comments(
    conn: Connection, workspace: str, resource_type: str, resource_id: str
) -> list[CommentRow]:
    """Live comments on one resource, oldest first."""
    q = (
        select(*_COLUMNS)
        .where(
            _C.workspace == workspace,
            _C.resource_type == resource_type,
            _C.resource_id == resource_id,
            _C.deleted_at.is_(None),
        )
        .order_by(_C.created_at, _C.id)
    )
    return [_row(r) for r in conn.execute(q)]


def comments_before(
    conn: Connection,
    workspace: str,
    resource_type: str,
    resource_id: str,
    before: tuple[datetime, int, int] | None,
    limit: int,
) -> list[CommentRow]:
    """Live comments newest first, strictly before ``(at, source rank, id)`` when given.

    Comments rank 1 in the activity merge: at one instant they sort before events (rank 0).
    """
    q = select(*_COLUMNS).where(
        _C.workspace == workspace,
        _C.resource_type == resource_type,
        _C.resource_id == resource_id,
        _C.deleted_at.is_(None),
    )
    if before is not None:
        at, rank, pk = before
        older = _C.created_at < at
        q = q.where(or_(older, and_(_C.created_at == at, _C.id < pk)) if rank == 1 else older)
    q = q.order_by(_C.created_at.desc(), _C.id.desc()).limit(limit)
    return [_row(r) for r in conn.execute(q)]


def thread_ids(conn: Connection, workspace: str, root_id: int) -> list[int]:
    """The live comment ``root_id`` and every live reply below it, at any depth."""
    found = [root_id]
    frontier = [root_id]
    while frontier:
        q = select(_C.id).where(
            _C.workspace == workspace, _C.parent_id.in_(frontier), _C.deleted_at.is_(None)
        )
        frontier = [int(i) for i in conn.scalars(q)]
        found.extend(frontier)
    return found


def soft_delete(conn: Connection, ids: list[int], actor: str) -> None:
    """Mark comments deleted."""
    conn.execute(
        update(comments)
        .where(_C.id.in_(ids), _C.deleted_at.is_(None))
        .values(deleted_at=utcnow(), deleted_by=actor)
    )
