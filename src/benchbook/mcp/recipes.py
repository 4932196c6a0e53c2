"""Guidance for the recipe tools (SPEC A Recipe, E.3): registered adapter specs for imports."""

from __future__ import annotations

from benchbook.mcp.guide import ToolGuide

RECIPE_ID = "The recipe id: 1-128 of [A-Za-z0-9._-], starting with a letter or digit."

SHARED = "Check against the installation-wide _shared tier instead of your workspace."

GUIDES: dict[str, ToolGuide] = {
    "register_recipe": ToolGuide(
        advice=(
            "Recipes are immutable like datasets: to change the source, mapping or graders, "
            "register a NEW version of the same id; identical content again is a no-op "
            "(created: false), different content under an existing version is a conflict. "
            "Check with validate_recipe first; use it in imports as request.recipe = {id, version}."
        ),
        idempotent=True,
    ),
    "validate_recipe": ToolGuide(
        advice="A dry run of register_recipe that writes nothing.",
        parameters={
            "payload": "The recipe body exactly as register_recipe would take it.",
            "shared": SHARED,
        },
        read_only=True,
    ),
    "list_recipes": ToolGuide(
        parameters={"search": "Case-insensitive substring of the id or description."},
        read_only=True,
    ),
    "get_recipe": ToolGuide(
        parameters={"recipe_id": RECIPE_ID, "version": "An exact SemVer or 'latest'."},
        read_only=True,
    ),
}
"""Operation name → guide, for ``services/recipes.py``."""
