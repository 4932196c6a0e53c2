"""Guidance for the recipe tools (SPEC A Recipe, E.3): registered adapter specs for imports."""

from __future__ import annotations

from benchbook.mcp.guide import ToolGuide
from benchbook.mcp.registered import id_text, noun_guides
from benchbook.transports import nouns

SHARED = "Check against the installation-wide _shared tier instead of your workspace."

GUIDES: dict[str, ToolGuide] = {
    **noun_guides(
        nouns.RECIPES,
        ToolGuide(
            advice=(
                "Recipes are immutable like datasets: to change the source, mapping or graders, "
                "register a NEW version of the same id; identical content again is a no-op "
                "(created: false), different content under an existing version is a conflict. "
                "Check with validate_recipe first; use it in imports as request.recipe = "
                "{id, version}."
            ),
            idempotent=True,
        ),
        id_text("recipe"),
    ),
    "validate_recipe": ToolGuide(
        advice="A dry run of register_recipe that writes nothing.",
        parameters={
            "payload": "The recipe body exactly as register_recipe would take it.",
            "shared": SHARED,
        },
        read_only=True,
    ),
}
"""Operation name → guide, for ``services/recipes.py``."""
