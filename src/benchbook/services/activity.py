"""A resource's activity timeline: stored events merged with comments, newest first.

One query per source, each already ordered and limited, merged in Python. The order key is
``(at, rank, pk)`` descending, with rank 1 for comments and 0 for events, so ties at one instant
are stable. A cursor is one int, ``pk * 2 + rank``: it names the last item shown, whose time is
looked up to continue strictly before it (comments are soft-deleted, so cursors stay valid).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection

from benchbook.contracts.registry import ActivityItem, ActivityPage
from benchbook.errors import NotFound
from benchbook.store import comments as comments_repo
from benchbook.store.events import event_time, events_before

EVENT_RANK = 0
COMMENT_RANK = 1


def _cursor_key(conn: Connection, workspace: str, cursor: int) -> tuple[datetime, int, int]:
    """``(at, rank, pk)`` of the item a cursor names. Raises NotFound when no item has it."""
    pk, rank = divmod(cursor, 2)
    at = (
        comments_repo.find_any_comment_time(conn, workspace, pk)
        if rank == COMMENT_RANK
        else event_time(conn, pk)
    )
    if at is None or cursor < 0:
        raise NotFound(
            f"unknown activity cursor {cursor}",
            {"errors": [{"path": "before", "message": "not a cursor from this timeline"}]},
        )
    return at, rank, pk


def resource_timeline(
    conn: Connection,
    *,
    owner: str,
    workspace: str,
    resource_type: str,
    resource_id: str,
    before: int | None,
    limit: int,
) -> ActivityPage:
    """Events of ``owner`` (the workspace that holds the resource) merged with comments of
    ``workspace`` (the caller's) on one resource, newest first, ``limit`` items per page.
    """
    key = _cursor_key(conn, workspace, before) if before is not None else None
    events = events_before(conn, owner, resource_type, resource_id, key, limit + 1)
    comments = comments_repo.comments_before(
        conn, workspace, resource_type, resource_id, key, limit + 1
    )
    items = [
        (
            e.at,
            EVENT_RANK,
            e.pk,
            ActivityItem(
                kind=e.kind,
                actor=e.actor,
                at=e.at,
                details=e.details,
                cursor=e.pk * 2 + EVENT_RANK,
            ),
        )
        for e in events
    ] + [
        (
            c.created_at,
            COMMENT_RANK,
            c.id,
            ActivityItem(
                kind="comment",
                actor=c.author,
                at=c.created_at,
                details={"comment_id": c.id, "parent_id": c.parent_id, "body": c.body},
                cursor=c.id * 2 + COMMENT_RANK,
            ),
        )
        for c in comments
    ]
    items.sort(key=lambda t: (t[0], t[1], t[2]), reverse=True)
    page = [t[3] for t in items[:limit]]
    more = len(items) > limit
    return ActivityPage(items=page, next_before=page[-1].cursor if more and page else None)
