"""Registered code repository: one canonical JSON body per ``(noun, workspace, id, version)``.

``noun`` is ``grader`` or ``environment`` (issue 27 item 2). Versions are immutable; a delete
sets a tombstone (``deleted_at``) that hides the version and keeps its bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from benchbook.store.tables import registered_code
from benchbook.store.versioned import VersionedTable


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


def code_table(noun: str) -> VersionedTable[CodeRow]:
    """The ``registered_code`` rows of ``noun`` (``grader``, ``environment``)."""
    return VersionedTable(registered_code, "item_id", CodeRow, {"noun": noun})
