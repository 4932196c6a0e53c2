"""One repository shape for the versioned registered nouns (issue 32): one canonical JSON body
per ``(workspace, id, version)`` in a table of its own (``harnesses``, ``recipes``) or in
``registered_code`` under a ``noun``.

Versions are immutable. A table with a ``deleted_at`` column tombstones: a delete hides the
version from reads and keeps its bytes, so runs that used it stay readable (SPEC B, H.1); a
table without one (``recipes``) never deletes and every version is live.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

from sqlalchemy import ColumnElement, Connection, Table, insert, select, update

from benchbook.store.tables import utcnow


@dataclass(frozen=True)
class VersionRow:
    """A stored version: the columns every versioned table has (a noun's row adds its id
    column and its own); ``body`` is the canonical JSON text."""

    pk: int
    workspace: str
    version: str
    body: str
    content_hash: str
    created_by: str
    created_at: datetime

    @property
    def live(self) -> bool:
        """True: versions of a table without tombstones are never deleted."""
        return True


@dataclass(frozen=True)
class TombstonedRow(VersionRow):
    """A version of a table with tombstones (``deleted_at``)."""

    deleted_at: datetime | None

    @property
    def live(self) -> bool:
        """True unless tombstoned."""
        return self.deleted_at is None


Row = TypeVar("Row", bound=VersionRow)


@dataclass(frozen=True)
class VersionedTable(Generic[Row]):
    """The versions of one noun.

    Attributes:
        table: where they are stored.
        id_column: the column of the item's id (``harness_id``, ``recipe_id``, ``item_id``).
        row: a dataclass whose fields are column names, built from each selected row.
        scope: column → value every read and insert carries (``{"noun": "grader"}``).
    """

    table: Table
    id_column: str
    row: type[Row]
    scope: Mapping[str, str] = field(default_factory=dict)

    def item_id(self, row: Row) -> str:
        """``row``'s id, whatever the table calls its column."""
        item_id: str = getattr(row, self.id_column)
        return item_id

    @property
    def tombstones(self) -> bool:
        """True when versions can be deleted (the table has ``deleted_at``)."""
        return "deleted_at" in self.table.c

    def _where(self, workspaces: list[str], item_id: str | None, live: bool) -> list[Any]:
        c = self.table.c
        where: list[ColumnElement[bool]] = [c[k] == v for k, v in self.scope.items()]
        where.append(c.workspace.in_(workspaces))
        if item_id is not None:
            where.append(c[self.id_column] == item_id)
        if live and self.tombstones:
            where.append(c.deleted_at.is_(None))
        return where

    def _select(self, *where: Any) -> Any:
        names = getattr(self.row, "__dataclass_fields__")  # noqa: B009
        return select(*(self.table.c[name] for name in names)).where(*where)

    def insert(self, conn: Connection, *, item_id: str, **values: Any) -> None:
        """Store one version (``values``: workspace, version, is_prerelease, body,
        content_hash, created_by and the table's own columns); the caller checked it does not
        exist."""
        row = {self.id_column: item_id, **self.scope, **values}
        conn.execute(insert(self.table).values(created_at=utcnow(), **row))

    def find(self, conn: Connection, workspace: str, item_id: str, version: str) -> Row | None:
        """The exact version in ``workspace`` (live or tombstoned), or None."""
        where = self._where([workspace], item_id, live=False)
        stmt = self._select(*where, self.table.c.version == version)
        found = conn.execute(stmt).first()
        return self.row(*found) if found is not None else None

    def by_pk(self, conn: Connection, pk: int) -> Row:
        """The version with primary key ``pk`` (tombstoned ones included)."""
        return self.row(*conn.execute(self._select(self.table.c.pk == pk)).one())

    def live_versions(self, conn: Connection, workspace: str, item_id: str) -> list[Row]:
        """Every live version of ``item_id`` in ``workspace`` (unordered)."""
        stmt = self._select(*self._where([workspace], item_id, live=True))
        return [self.row(*r) for r in conn.execute(stmt)]

    def live_in(self, conn: Connection, workspaces: list[str]) -> list[Row]:
        """Every live version in the given workspaces (for listings)."""
        stmt = self._select(*self._where(workspaces, None, live=True))
        return [self.row(*r) for r in conn.execute(stmt)]

    def set_deleted(self, conn: Connection, pk: int, deleted: bool) -> None:
        """Tombstone (``deleted``) or revive one version."""
        stamp = utcnow() if deleted else None
        conn.execute(update(self.table).where(self.table.c.pk == pk).values(deleted_at=stamp))
