"""Recipes repository: one canonical JSON body per ``(workspace, recipe_id, version)``.

Recipes are immutable and never deleted: a row is written once and only read afterwards.
Reads and writes go through :data:`RECIPES` (``store.versioned``).
"""

from __future__ import annotations

from dataclasses import dataclass

from benchbook.store.tables import recipes
from benchbook.store.versioned import VersionedTable, VersionRow


@dataclass(frozen=True)
class RecipeRow(VersionRow):
    """A stored recipe version (``store.versioned.VersionRow``, always live) with its id."""

    recipe_id: str


RECIPES: VersionedTable[RecipeRow] = VersionedTable(recipes, "recipe_id", RecipeRow)
"""The recipe versions (every one live)."""
