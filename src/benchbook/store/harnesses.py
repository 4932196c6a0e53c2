"""Harnesses repository: one canonical JSON body per ``(workspace, harness_id, version)``.

Harness versions are immutable; a delete sets a tombstone (``deleted_at``) that hides the
version from reads and keeps its bytes, so runs that used it stay readable (SPEC B, H.1).
Reads and writes go through :data:`HARNESSES` (``store.versioned``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection

from benchbook.store.tables import harnesses
from benchbook.store.versioned import VersionedTable


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


HARNESSES: VersionedTable[HarnessRow] = VersionedTable(harnesses, "harness_id", HarnessRow)
"""The harness versions (the insert also takes ``kind``)."""


def harness_by_pk(conn: Connection, pk: int) -> HarnessRow:
    """The version with primary key ``pk`` (tombstoned ones included)."""
    return HARNESSES.by_pk(conn, pk)
