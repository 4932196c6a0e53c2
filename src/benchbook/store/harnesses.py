"""Harnesses repository: one canonical JSON body per ``(workspace, harness_id, version)``.

Harness versions are immutable; a delete sets a tombstone (``deleted_at``) that hides the
version from reads and keeps its bytes, so runs that used it stay readable (SPEC B, H.1).
Reads and writes go through :data:`HARNESSES` (``store.versioned``).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection

from benchbook.store.tables import harnesses
from benchbook.store.versioned import TombstonedRow, VersionedTable


@dataclass(frozen=True)
class HarnessRow(TombstonedRow):
    """A stored harness version (``store.versioned.TombstonedRow``) with its id and kind."""

    harness_id: str
    kind: str


HARNESSES: VersionedTable[HarnessRow] = VersionedTable(harnesses, "harness_id", HarnessRow)
"""The harness versions (the insert also takes ``kind``)."""


def harness_by_pk(conn: Connection, pk: int) -> HarnessRow:
    """The version with primary key ``pk`` (tombstoned ones included)."""
    return HARNESSES.by_pk(conn, pk)
