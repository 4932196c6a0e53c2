"""Named worker leases: at most one holder per name until its lease lapses.

Used for the one runs worker an SQLite database allows (name ``runs``). Every change is a
conditional write on the row as it was read, so two processes racing for a lease never both
win it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from benchbook.store.tables import worker_leases

_L = worker_leases.c


@dataclass(frozen=True)
class Lease:
    """Who holds a named lease, and until when."""

    name: str
    holder: str
    expires_at: datetime


def get_lease(conn: Connection, name: str) -> Lease | None:
    """The lease ``name``, or None when nobody ever took it (or it was released)."""
    row = conn.execute(select(_L.name, _L.holder, _L.expires_at).where(_L.name == name)).first()
    return Lease(*row) if row is not None else None


def take_lease(
    conn: Connection, name: str, holder: str, until: datetime, seen: Lease | None
) -> bool:
    """Give the lease to ``holder`` until ``until`` if it is still as ``seen`` (None: free).

    Returns:
        True when ``holder`` holds it now; False when someone changed it since it was read.
    """
    if seen is None:
        try:
            with conn.begin_nested():
                conn.execute(
                    insert(worker_leases).values(name=name, holder=holder, expires_at=until)
                )
        except IntegrityError:
            return False
        return True
    stmt = (
        update(worker_leases)
        .where(_L.name == name, _L.holder == seen.holder, _L.expires_at == seen.expires_at)
        .values(holder=holder, expires_at=until)
    )
    return conn.execute(stmt).rowcount == 1


def renew_lease(conn: Connection, name: str, holder: str, until: datetime) -> bool:
    """Extend ``holder``'s lease; False when it no longer holds it."""
    stmt = (
        update(worker_leases).where(_L.name == name, _L.holder == holder).values(expires_at=until)
    )
    return conn.execute(stmt).rowcount == 1


def release_lease(conn: Connection, name: str, holder: str) -> None:
    """Give the lease up (nothing happens when ``holder`` does not hold it)."""
    conn.execute(delete(worker_leases).where(_L.name == name, _L.holder == holder))
