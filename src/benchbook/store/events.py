"""Activity events: one row per registered / deleted / revived / tagged happening."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import Connection, and_, insert, or_, select

from benchbook.store.tables import events, utcnow


@dataclass(frozen=True)
class EventRow:
    """One stored event."""

    pk: int
    kind: str
    actor: str
    at: datetime
    details: dict[str, Any]


def add_event(
    conn: Connection,
    *,
    workspace: str,
    resource_type: str,
    resource_id: str,
    kind: str,
    actor: str,
    details: dict[str, Any] | None = None,
) -> None:
    """Append an event to a resource's timeline."""
    conn.execute(
        insert(events).values(
            workspace=workspace,
            resource_type=resource_type,
            resource_id=resource_id,
            kind=kind,
            actor=actor,
            at=utcnow(),
            details=orjson.dumps(details or {}).decode(),
        )
    )


def event_time(conn: Connection, pk: int) -> datetime | None:
    """When event ``pk`` happened, or None."""
    value: datetime | None = conn.scalar(select(events.c.at).where(events.c.pk == pk))
    return value


def events_before(
    conn: Connection,
    workspace: str,
    resource_type: str,
    resource_id: str,
    before: tuple[datetime, int, int] | None,
    limit: int,
) -> list[EventRow]:
    """Events of one resource newest first, strictly before ``(at, source rank, pk)``.

    Events rank 0 in a merged timeline: at one instant they sort after rank-1 sources
    (comments), so a rank-1 cursor keeps every event of its instant.
    """
    e = events.c
    q = select(e.pk, e.kind, e.actor, e.at, e.details).where(
        e.workspace == workspace, e.resource_type == resource_type, e.resource_id == resource_id
    )
    if before is not None:
        at, rank, pk = before
        same = e.at == at if rank > 0 else and_(e.at == at, e.pk < pk)
        q = q.where(or_(e.at < at, same))
    q = q.order_by(e.at.desc(), e.pk.desc()).limit(limit)
    return [EventRow(r.pk, r.kind, r.actor, r.at, orjson.loads(r.details)) for r in conn.execute(q)]
