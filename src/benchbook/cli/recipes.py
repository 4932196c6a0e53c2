"""``benchbook recipes register FILE | validate FILE | list | show ID [VERSION]``."""

from __future__ import annotations

from pathlib import Path

import typer

from benchbook.cli import registered
from benchbook.cli.app import (
    JSON_OPTION,
    app,
    cell,
    console,
    emit_json,
    escape,
    handle_errors,
    local_context,
    read_json_file,
)
from benchbook.errors import InvalidInput
from benchbook.services import recipes as svc
from benchbook.transports import nouns

recipes_app = typer.Typer(help="Registered recipes: source + mapping + graders, versioned.")
app.add_typer(recipes_app, name="recipes")


RECIPES = registered.CliNoun(
    ops=nouns.RECIPES,
    title="recipe",
    parse=svc.parse_recipe,
    columns=("id", "latest", "versions", "category", "source", "owner"),
    row=lambda r: (r.id, r.latest, len(r.versions), r.category, r.source_kind, r.workspace),
    docs={
        "register": "Register a recipe version (identical again: unchanged; different: conflict).",
        "list": "List recipes: own ids plus _shared ones not shadowed by own ids.",
        "show": "Show one recipe version as JSON (``latest`` resolved).",
    },
    file_help="A recipe JSON file.",
    id_param="recipe_id",
    id_help="The recipe id.",
    version_help="An exact version or latest.",
    pretty_show=True,
)
registered.add_register(recipes_app, RECIPES)


@recipes_app.command()
@handle_errors
def validate(
    file: Path = typer.Argument(..., help="A recipe JSON file."),
    json: bool = JSON_OPTION,
) -> None:
    """Dry-run a register: errors by path, existing versions, conflicts. Writes nothing."""
    payload = read_json_file(file)
    if not isinstance(payload, dict):
        raise InvalidInput(f"{file}: a recipe must be a JSON object")
    report = svc.validate_recipe(local_context(), payload)
    if json:
        emit_json(report)
    else:
        for issue in report.errors:
            console.print(f"[red]{escape(issue.path)}[/]: {escape(issue.message)}")
        existing = ", ".join(report.existing_versions) or "none"
        console.print(cell(f"{'ok' if report.ok else 'invalid'} (existing versions: {existing})"))
    if not report.ok:
        raise typer.Exit(1)


registered.add_list(recipes_app, RECIPES)
registered.add_show(recipes_app, RECIPES)
