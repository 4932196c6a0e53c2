"""Recipes repository: one canonical JSON body per ``(workspace, recipe_id, version)``.

Recipes are immutable and never deleted: a row is written once and only read afterwards.
Reads and writes go through :data:`RECIPES` (``store.versioned``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from benchbook.store.tables import recipes
from benchbook.store.versioned import VersionedTable


@dataclass(frozen=True)
class RecipeRow:
    """A stored recipe version; ``body`` is its canonical JSON text."""

    pk: int
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


RECIPES: VersionedTable[RecipeRow] = VersionedTable(recipes, "recipe_id", RecipeRow)
"""The recipe versions (every one live)."""
