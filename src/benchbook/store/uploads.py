"""Uploaded files kept in the database (the import wizard's uploads), in 1 MiB chunks, so any
server on the same database can preview or import a file another one received."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, delete, insert, select, update

from benchbook.store.tables import upload_chunks, uploads, utcnow

_U = uploads.c
_K = upload_chunks.c


@dataclass(frozen=True)
class UploadRow:
    """An upload's header: whose it is, its file name, size (bytes) and SHA-256."""

    id: str
    workspace: str
    user_id: str
    name: str
    size_bytes: int
    sha256: str
    created_at: datetime


def insert_upload(conn: Connection, row: UploadRow) -> None:
    """Store an upload's header (its chunks go in with :func:`insert_chunk`)."""
    conn.execute(
        insert(uploads).values(
            id=row.id,
            workspace=row.workspace,
            user_id=row.user_id,
            name=row.name,
            size_bytes=row.size_bytes,
            sha256=row.sha256,
            created_at=row.created_at,
        )
    )


def insert_chunk(conn: Connection, upload_id: str, seq: int, data: bytes) -> None:
    """Store chunk ``seq`` (0-based, in file order) of an upload."""
    conn.execute(insert(upload_chunks).values(upload_id=upload_id, seq=seq, data=data))


def set_content(conn: Connection, upload_id: str, size_bytes: int, sha256: str) -> None:
    """Record the size and SHA-256 of an upload once all its chunks are in."""
    conn.execute(
        update(uploads).where(_U.id == upload_id).values(size_bytes=size_bytes, sha256=sha256)
    )


def get_upload(conn: Connection, upload_id: str) -> UploadRow | None:
    """The upload's header, or None."""
    row = conn.execute(
        select(
            _U.id, _U.workspace, _U.user_id, _U.name, _U.size_bytes, _U.sha256, _U.created_at
        ).where(_U.id == upload_id)
    ).first()
    return UploadRow(*row) if row is not None else None


def iter_chunks(conn: Connection, upload_id: str) -> Iterator[bytes]:
    """The upload's bytes in order, one chunk (one query) at a time."""
    seq = 0
    while True:
        data = conn.execute(
            select(_K.data).where(_K.upload_id == upload_id, _K.seq == seq)
        ).scalar()
        if data is None:
            return
        yield bytes(data)
        seq += 1


def delete_upload(conn: Connection, upload_id: str) -> None:
    """Remove an upload and its chunks."""
    conn.execute(delete(upload_chunks).where(_K.upload_id == upload_id))
    conn.execute(delete(uploads).where(_U.id == upload_id))


def older_than_newest(conn: Connection, workspace: str, user_id: str, keep: int) -> list[str]:
    """Ids of the owner's uploads beyond the newest ``keep``."""
    stmt = (
        select(_U.id)
        .where(_U.workspace == workspace, _U.user_id == user_id)
        .order_by(_U.created_at.desc(), _U.id.desc())
        .offset(keep)
    )
    return [r[0] for r in conn.execute(stmt)]


def now() -> datetime:
    """The store's clock (for callers building an :class:`UploadRow`)."""
    return utcnow()
