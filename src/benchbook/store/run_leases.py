"""Run leases (SPEC H.4): which runs a worker may take, taking one (compare-and-set) and renewing
the holder's lease. A run's holder is ``claimed_by``; its lease lapses at ``lease_expires_at``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, bindparam, func, or_, select, update

from benchbook.store.runs import RUN_COLUMNS, RunRow
from benchbook.store.tables import runs

_R = runs.c


def _claimable(now: datetime) -> Any:
    """Queued, or running with a lapsed (or no) lease."""
    lapsed = or_(_R.lease_expires_at.is_(None), _R.lease_expires_at < now)
    return or_(_R.status == "queued", and_(_R.status == "running", lapsed))


def lock_claimable(
    conn: Connection, now: datetime, host_prefix: str | None = None, limit: int = 10
) -> list[RunRow]:
    """Runs another worker may take, oldest first, row-locked for the caller's transaction.

    Queued runs and running runs whose lease lapsed before ``now``; with ``host_prefix``
    (``"host:"``) also the running runs held by processes of that host, whose liveness the
    caller checks itself. On PostgreSQL the rows are read ``FOR UPDATE SKIP LOCKED``: a run
    another worker is claiming at this moment is skipped, not waited for; SQLite has one
    writer and no row locks, so the caller's conditional update (:func:`take_run`) decides.
    """
    cond = _claimable(now)
    if host_prefix is not None:
        cond = or_(cond, and_(_R.status == "running", _R.claimed_by.like(f"{host_prefix}%")))
    stmt = (
        select(*RUN_COLUMNS)
        .where(cond)
        .order_by(_R.created_at, _R.id)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    return [RunRow(*r) for r in conn.execute(stmt)]


def take_run(
    conn: Connection,
    row: RunRow,
    worker: str,
    now: datetime,
    lease_until: datetime,
) -> bool:
    """Give ``row``'s run to ``worker`` if nobody changed its status, holder or lease since
    ``row`` was read (compare-and-set); True when ``worker`` now holds it, ``running``."""
    holder = _R.claimed_by.is_(None) if row.claimed_by is None else _R.claimed_by == row.claimed_by
    until = row.lease_expires_at
    lease = _R.lease_expires_at.is_(None) if until is None else _R.lease_expires_at == until
    stmt = (
        update(runs)
        .where(_R.id == row.id, _R.status == row.status, holder, lease)
        .values(
            status="running",
            claimed_by=worker,
            heartbeat_at=now,
            lease_expires_at=lease_until,
            started_at=func.coalesce(_R.started_at, now),
        )
    )
    return conn.execute(stmt).rowcount == 1


# Built once: renewing runs with every result batch, and a statement built per call costs its
# construction and its cache key (bench/command_run.py).
_RENEW_LEASE = (
    update(runs)
    .where(_R.id == bindparam("run_id"), _R.claimed_by == bindparam("worker"))
    .values(heartbeat_at=bindparam("now"), lease_expires_at=bindparam("lease_until"))
    .returning(_R.cancel_requested)
)


def renew_lease(
    conn: Connection, run_id: str, worker: str, now: datetime, lease_until: datetime
) -> bool | None:
    """Renew ``worker``'s lease on a run in one statement (it row-locks the run on PostgreSQL
    until the caller commits, so a result batch written in the same transaction is fenced:
    nobody can take the run over in between).

    Returns:
        None when ``worker`` no longer holds the run; else whether a cancel was requested.
    """
    params = {"run_id": run_id, "worker": worker, "now": now, "lease_until": lease_until}
    row = conn.execute(_RENEW_LEASE, params).first()
    return None if row is None else bool(row[0])
