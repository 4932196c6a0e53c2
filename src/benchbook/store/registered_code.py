"""Registered code repository: one canonical JSON body per ``(noun, workspace, id, version)``.

``noun`` is ``grader`` or ``environment`` (issue 27 item 2). Versions are immutable; a delete
sets a tombstone (``deleted_at``) that hides the version and keeps its bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchbook.store.tables import registered_code
from benchbook.store.versioned import TombstonedRow, VersionedTable


@dataclass(frozen=True)
class CodeRow(TombstonedRow):
    """A stored version (``store.versioned.TombstonedRow``) of a noun's id."""

    noun: str
    item_id: str


def code_table(noun: str) -> VersionedTable[CodeRow]:
    """The ``registered_code`` rows of ``noun`` (``grader``, ``environment``)."""
    return VersionedTable(registered_code, "item_id", CodeRow, {"noun": noun})
