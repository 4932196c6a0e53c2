"""``benchbook recipes register FILE | validate FILE | list | show ID [VERSION]``."""

from __future__ import annotations

from pathlib import Path

import typer

from benchbook.cli.app import (
    JSON_OPTION,
    app,
    cell,
    console,
    emit_json,
    escape,
    handle_errors,
    local_context,
    make_table,
    read_json_file,
)
from benchbook.errors import InvalidInput
from benchbook.services import recipes as svc

recipes_app = typer.Typer(help="Registered recipes: source + mapping + graders, versioned.")
app.add_typer(recipes_app, name="recipes")


@recipes_app.command()
@handle_errors
def register(
    file: Path = typer.Argument(..., help="A recipe JSON file."),
    shared: bool = typer.Option(False, help="Publish into the _shared tier."),
    json: bool = JSON_OPTION,
) -> None:
    """Register a recipe version (identical again: unchanged; different: conflict)."""
    result = svc.register_recipe(local_context(), svc.parse_recipe(read_json_file(file)), shared)
    if json:
        return emit_json(result)
    state = "registered" if result.created else "unchanged"
    console.print(
        f"{state} recipe [bold]{escape(result.id)}@{escape(result.version)}[/]"
        f" in {escape(result.workspace)}"
    )


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


@recipes_app.command("list")
@handle_errors
def list_(
    search: str | None = typer.Option(None, help="Substring of id or description."),
    json: bool = JSON_OPTION,
) -> None:
    """List recipes: own ids plus _shared ones not shadowed by own ids."""
    items = svc.list_recipes(local_context(), search)
    if json:
        return emit_json(items)
    table = make_table("id", "latest", "versions", "category", "source", "owner")
    for r in items:
        table.add_row(
            *map(cell, (r.id, r.latest, len(r.versions), r.category, r.source_kind, r.workspace))
        )
    console.print(table)


@recipes_app.command()
@handle_errors
def show(
    recipe_id: str = typer.Argument(..., help="The recipe id."),
    version: str = typer.Argument("latest", help="An exact version or latest."),
    json: bool = JSON_OPTION,
) -> None:
    """Show one recipe version as JSON (``latest`` resolved)."""
    recipe = svc.get_recipe(local_context(), recipe_id, version)
    if json:
        return emit_json(recipe)
    console.print_json(recipe.model_dump_json(exclude_none=True))
