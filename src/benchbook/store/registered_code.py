"""Registered code repository: one canonical JSON body per ``(noun, workspace, id, version)``.

``noun`` is ``grader`` or ``environment`` (issue 27 item 2). Versions are immutable; a delete
sets a tombstone (``deleted_at``) that hides the version and keeps its bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, insert, select, update

from benchbook.store.tables import registered_code, utcnow

_C = registered_code.c


@dataclass(frozen=True)
class CodeRow:
    """A stored version; ``body`` is its canonical JSON text."""

    pk: int
    noun: str
    workspace: str
    item_id: str
    version: str
    body: str
    content_hash: str
    created_by: str
    created_at: datetime
    deleted_at: datetime | None

    @property
    def live(self) -> bool:
        """True unless tombstoned."""
        return self.deleted_at is None


_COLUMNS = tuple(_C[f] for f in CodeRow.__dataclass_fields__)


def _row(r: Any) -> CodeRow:
    return CodeRow(*r)


def insert_item(conn: Connection, **values: Any) -> None:
    """Store one version (``values``: noun, workspace, item_id, version, is_prerelease, body,
    content_hash, created_by); the caller checked it does not exist."""
    conn.execute(insert(registered_code).values(created_at=utcnow(), **values))


def find_item(
    conn: Connection, noun: str, workspace: str, item_id: str, version: str
) -> CodeRow | None:
    """The exact version in ``workspace`` (live or tombstoned), or None."""
    stmt = select(*_COLUMNS).where(
        _C.noun == noun, _C.workspace == workspace, _C.item_id == item_id, _C.version == version
    )
    row = conn.execute(stmt).first()
    return _row(row) if row is not None else None


def live_versions(conn: Connection, noun: str, workspace: str, item_id: str) -> list[CodeRow]:
    """Every live version of ``item_id`` in ``workspace`` (unordered)."""
    stmt = select(*_COLUMNS).where(
        _C.noun == noun,
        _C.workspace == workspace,
        _C.item_id == item_id,
        _C.deleted_at.is_(None),
    )
    return [_row(r) for r in conn.execute(stmt)]


def live_in(conn: Connection, noun: str, workspaces: list[str]) -> list[CodeRow]:
    """Every live version in the given workspaces (for listings)."""
    stmt = select(*_COLUMNS).where(
        _C.noun == noun, _C.workspace.in_(workspaces), _C.deleted_at.is_(None)
    )
    return [_row(r) for r in conn.execute(stmt)]


def set_deleted(conn: Connection, pk: int, deleted: bool) -> None:
    """Tombstone (``deleted``) or revive one version."""
    conn.execute(
        update(registered_code).where(_C.pk == pk).values(deleted_at=utcnow() if deleted else None)
    )
