"""Recipes repository: one canonical JSON body per ``(workspace, recipe_id, version)``.

Recipes are immutable and never deleted: a row is written once and only read afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, insert, select

from benchbook.store.tables import recipes, utcnow

_R = recipes.c


@dataclass(frozen=True)
class RecipeRow:
    """A stored recipe version; ``body`` is its canonical JSON text."""

    workspace: str
    recipe_id: str
    version: str
    body: str
    content_hash: str
    created_by: str
    created_at: datetime

    @property
    def item_id(self) -> str:
        """``recipe_id``, as ``services.registered`` names every noun's id."""
        return self.recipe_id

    @property
    def live(self) -> bool:
        """Always True: recipe versions are never tombstoned."""
        return True


_COLUMNS = (
    _R.workspace,
    _R.recipe_id,
    _R.version,
    _R.body,
    _R.content_hash,
    _R.created_by,
    _R.created_at,
)


def _row(r: Any) -> RecipeRow:
    return RecipeRow(*r)


def insert_recipe(
    conn: Connection,
    *,
    workspace: str,
    recipe_id: str,
    version: str,
    is_prerelease: bool,
    body: str,
    content_hash: str,
    created_by: str,
) -> RecipeRow:
    """Store one recipe version (the caller has checked it does not exist)."""
    now = utcnow()
    conn.execute(
        insert(recipes).values(
            workspace=workspace,
            recipe_id=recipe_id,
            version=version,
            is_prerelease=is_prerelease,
            body=body,
            content_hash=content_hash,
            created_by=created_by,
            created_at=now,
        )
    )
    return RecipeRow(workspace, recipe_id, version, body, content_hash, created_by, now)


def find_recipe(conn: Connection, workspace: str, recipe_id: str, version: str) -> RecipeRow | None:
    """The exact version in ``workspace``, or None."""
    stmt = select(*_COLUMNS).where(
        _R.workspace == workspace, _R.recipe_id == recipe_id, _R.version == version
    )
    row = conn.execute(stmt).first()
    return _row(row) if row is not None else None


def recipe_versions(conn: Connection, workspace: str, recipe_id: str) -> list[RecipeRow]:
    """Every version of ``recipe_id`` in ``workspace`` (unordered)."""
    stmt = select(*_COLUMNS).where(_R.workspace == workspace, _R.recipe_id == recipe_id)
    return [_row(r) for r in conn.execute(stmt)]


def recipes_in(conn: Connection, workspaces: list[str]) -> list[RecipeRow]:
    """Every version in the given workspaces (for listings)."""
    stmt = select(*_COLUMNS).where(_R.workspace.in_(workspaces))
    return [_row(r) for r in conn.execute(stmt)]
