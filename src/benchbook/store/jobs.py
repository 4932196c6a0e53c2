"""Import jobs repository: one row per job, so any process can read a job's state.

State changes are conditional updates (``WHERE state = …``) so a cancel racing the worker never
moves a finished job back, and a queued job cancelled before it starts is never run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, insert, select, update

from benchbook.store.tables import import_jobs, utcnow

_J = import_jobs.c


@dataclass(frozen=True)
class JobRow:
    """A stored job; ``request``, ``result`` and ``error`` are JSON text."""

    id: str
    workspace: str
    state: str
    request: str
    file_name: str | None
    rows_read: int
    cases_built: int
    total: int | None
    fraction: float | None
    result: str | None
    error: str | None
    cancel_requested: bool
    created_by: str
    created_at: datetime
    started_at: datetime | None
    updated_at: datetime
    finished_at: datetime | None


_COLUMNS = (
    _J.id,
    _J.workspace,
    _J.state,
    _J.request,
    _J.file_name,
    _J.rows_read,
    _J.cases_built,
    _J.total,
    _J.fraction,
    _J.result,
    _J.error,
    _J.cancel_requested,
    _J.created_by,
    _J.created_at,
    _J.started_at,
    _J.updated_at,
    _J.finished_at,
)


def _row(r: Any) -> JobRow:
    return JobRow(*r)


def insert_job(
    conn: Connection,
    *,
    job_id: str,
    workspace: str,
    request: str,
    file_name: str | None,
    created_by: str,
    claimed_by: str | None = None,
    lease_expires_at: datetime | None = None,
) -> None:
    """Store a new ``queued`` job with zero progress, held by ``claimed_by`` (the process that
    will run it) until ``lease_expires_at`` unless renewed."""
    now = utcnow()
    conn.execute(
        insert(import_jobs).values(
            id=job_id,
            workspace=workspace,
            state="queued",
            request=request,
            file_name=file_name,
            rows_read=0,
            cases_built=0,
            cancel_requested=False,
            created_by=created_by,
            created_at=now,
            updated_at=now,
            claimed_by=claimed_by,
            lease_expires_at=lease_expires_at,
        )
    )


def find_job(conn: Connection, workspace: str, job_id: str) -> JobRow | None:
    """The job ``job_id`` of ``workspace``, or None (another workspace's job is None too)."""
    stmt = select(*_COLUMNS).where(_J.id == job_id, _J.workspace == workspace)
    row = conn.execute(stmt).first()
    return _row(row) if row is not None else None


def list_jobs(conn: Connection, workspace: str, limit: int) -> list[JobRow]:
    """The workspace's most recent jobs first, at most ``limit``."""
    stmt = (
        select(*_COLUMNS)
        .where(_J.workspace == workspace)
        .order_by(_J.created_at.desc(), _J.id.desc())
        .limit(limit)
    )
    return [_row(r) for r in conn.execute(stmt)]


def mark_running(conn: Connection, job_id: str) -> bool:
    """``queued → running`` unless a cancel came first; True when the job should run."""
    now = utcnow()
    stmt = (
        update(import_jobs)
        .where(_J.id == job_id, _J.state == "queued", _J.cancel_requested.is_(False))
        .values(state="running", started_at=now, updated_at=now)
    )
    return conn.execute(stmt).rowcount == 1


def save_progress(
    conn: Connection,
    job_id: str,
    rows_read: int,
    cases_built: int,
    total: int | None,
    lease_until: datetime | None = None,
    fraction: float | None = None,
) -> bool:
    """Record progress of a running job (``fraction``: share of the source read, 0.0-1.0, or
    None) and extend its lease to ``lease_until`` when given; returns whether a cancel has been
    requested."""
    values: dict[str, Any] = {
        "rows_read": rows_read,
        "cases_built": cases_built,
        "total": total,
        "fraction": fraction,
        "updated_at": utcnow(),
    }
    if lease_until is not None:
        values["lease_expires_at"] = lease_until
    conn.execute(update(import_jobs).where(_J.id == job_id, _J.state == "running").values(**values))
    flag = conn.execute(select(_J.cancel_requested).where(_J.id == job_id)).scalar_one()
    return bool(flag)


def request_cancel(conn: Connection, job_id: str) -> None:
    """Flag a cancel; a still-queued job becomes ``cancelled`` at once."""
    now = utcnow()
    conn.execute(
        update(import_jobs)
        .where(_J.id == job_id, _J.state.in_(("queued", "running")))
        .values(cancel_requested=True, updated_at=now)
    )
    conn.execute(
        update(import_jobs)
        .where(_J.id == job_id, _J.state == "queued")
        .values(
            state="cancelled",
            error='{"code":"cancelled","details":{},"message":"cancelled before it started"}',
            finished_at=now,
        )
    )


def finish_job(
    conn: Connection,
    job_id: str,
    state: str,
    *,
    result: str | None = None,
    error: str | None = None,
    progress: tuple[int, int, int | None, float | None] | None = None,
) -> None:
    """Move a running job to its final ``state`` with its result or error envelope and its
    last ``progress`` ``(rows read, cases built, total, fraction)``."""
    now = utcnow()
    values: dict[str, Any] = {
        "state": state,
        "result": result,
        "error": error,
        "updated_at": now,
        "finished_at": now,
    }
    if progress is not None:
        values.update(
            rows_read=progress[0], cases_built=progress[1], total=progress[2], fraction=progress[3]
        )
    conn.execute(update(import_jobs).where(_J.id == job_id, _J.state == "running").values(**values))


def renew_job_leases(
    conn: Connection, job_ids: Sequence[str], holder: str, until: datetime
) -> None:
    """Extend ``holder``'s lease on its unfinished jobs among ``job_ids``."""
    if job_ids:
        conn.execute(
            update(import_jobs)
            .where(
                _J.id.in_(list(job_ids)),
                _J.claimed_by == holder,
                _J.state.in_(("queued", "running")),
            )
            .values(lease_expires_at=until)
        )


def held_unfinished(conn: Connection) -> list[tuple[str, str, datetime | None]]:
    """``(job id, holder, lease expiry)`` of every queued or running job with a holder."""
    stmt = select(_J.id, _J.claimed_by, _J.lease_expires_at).where(
        _J.state.in_(("queued", "running")), _J.claimed_by.is_not(None)
    )
    return [(i, str(h), e) for i, h, e in conn.execute(stmt)]


def end_orphan(conn: Connection, job_id: str, holder: str, error: str) -> bool:
    """Fail a queued or running job still held by ``holder`` (whose process is gone)."""
    now = utcnow()
    stmt = (
        update(import_jobs)
        .where(
            _J.id == job_id,
            _J.claimed_by == holder,
            _J.state.in_(("queued", "running")),
        )
        .values(state="failed", error=error, updated_at=now, finished_at=now)
    )
    return conn.execute(stmt).rowcount == 1
