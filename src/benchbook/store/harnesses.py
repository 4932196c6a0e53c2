"""Harnesses repository: one canonical JSON body per ``(workspace, harness_id, version)``.

Harness versions are immutable; a delete sets a tombstone (``deleted_at``) that hides the
version from reads and keeps its bytes, so runs that used it stay readable (SPEC B, H.1).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, insert, select, update

from benchbook.store.tables import harnesses, utcnow

_H = harnesses.c


@dataclass(frozen=True)
class HarnessRow:
    """A stored harness version; ``body`` is its canonical JSON text."""

    pk: int
    workspace: str
    harness_id: str
    version: str
    kind: str
    body: str
    content_hash: str
    created_by: str
    created_at: datetime
    deleted_at: datetime | None

    @property
    def live(self) -> bool:
        """True unless tombstoned."""
        return self.deleted_at is None

    @property
    def item_id(self) -> str:
        """``harness_id``, as ``services.registered`` names every noun's id."""
        return self.harness_id


_COLUMNS = (
    _H.pk,
    _H.workspace,
    _H.harness_id,
    _H.version,
    _H.kind,
    _H.body,
    _H.content_hash,
    _H.created_by,
    _H.created_at,
    _H.deleted_at,
)


def _row(r: Any) -> HarnessRow:
    return HarnessRow(*r)


def insert_harness(
    conn: Connection,
    *,
    workspace: str,
    harness_id: str,
    version: str,
    is_prerelease: bool,
    kind: str,
    body: str,
    content_hash: str,
    created_by: str,
) -> None:
    """Store one harness version (the caller has checked it does not exist)."""
    conn.execute(
        insert(harnesses).values(
            workspace=workspace,
            harness_id=harness_id,
            version=version,
            is_prerelease=is_prerelease,
            kind=kind,
            body=body,
            content_hash=content_hash,
            created_by=created_by,
            created_at=utcnow(),
        )
    )


def find_harness(
    conn: Connection, workspace: str, harness_id: str, version: str
) -> HarnessRow | None:
    """The exact version in ``workspace`` (live or tombstoned), or None."""
    stmt = select(*_COLUMNS).where(
        _H.workspace == workspace, _H.harness_id == harness_id, _H.version == version
    )
    row = conn.execute(stmt).first()
    return _row(row) if row is not None else None


def harness_by_pk(conn: Connection, pk: int) -> HarnessRow:
    """The version with primary key ``pk`` (tombstoned ones included)."""
    return _row(conn.execute(select(*_COLUMNS).where(_H.pk == pk)).one())


def live_versions(conn: Connection, workspace: str, harness_id: str) -> list[HarnessRow]:
    """Every live version of ``harness_id`` in ``workspace`` (unordered)."""
    stmt = select(*_COLUMNS).where(
        _H.workspace == workspace, _H.harness_id == harness_id, _H.deleted_at.is_(None)
    )
    return [_row(r) for r in conn.execute(stmt)]


def live_in(conn: Connection, workspaces: list[str]) -> list[HarnessRow]:
    """Every live version in the given workspaces (for listings)."""
    stmt = select(*_COLUMNS).where(_H.workspace.in_(workspaces), _H.deleted_at.is_(None))
    return [_row(r) for r in conn.execute(stmt)]


def set_deleted(conn: Connection, pk: int, deleted: bool) -> None:
    """Tombstone (``deleted``) or revive one version."""
    conn.execute(
        update(harnesses).where(_H.pk == pk).values(deleted_at=utcnow() if deleted else None)
    )
