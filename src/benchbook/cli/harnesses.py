"""``benchbook harnesses register FILE | list | show ID [VERSION] | delete ID VERSION``."""

from __future__ import annotations

from pathlib import Path

import typer

from benchbook.cli.app import (
    ALREADY_JSON,
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
from benchbook.services import harnesses as svc

harnesses_app = typer.Typer(help="Harnesses: the agents under evaluation, versioned.")
app.add_typer(harnesses_app, name="harnesses")


@harnesses_app.command()
@handle_errors
def register(
    file: Path = typer.Argument(..., help="A harness JSON file {id, version, kind, config}."),
    shared: bool = typer.Option(False, help="Publish into the _shared tier."),
    json: bool = JSON_OPTION,
) -> None:
    """Register a harness version (identical again: unchanged; different: conflict)."""
    result = svc.register_harness(local_context(), svc.parse_harness(read_json_file(file)), shared)
    if json:
        return emit_json(result)
    state = "registered" if result.created else "unchanged"
    console.print(
        f"{state} harness [bold]{escape(result.id)}@{escape(result.version)}[/]"
        f" in {escape(result.workspace)}"
    )


@harnesses_app.command("list")
@handle_errors
def list_(
    search: str | None = typer.Option(None, help="Substring of id or description."),
    json: bool = JSON_OPTION,
) -> None:
    """Harnesses: own ids plus _shared ones not shadowed by own ids."""
    items = svc.list_harnesses(local_context(), search)
    if json:
        return emit_json(items)
    table = make_table("id", "kind", "latest", "versions", "owner", "description")
    for h in items:
        table.add_row(
            cell(h.id),
            cell(h.kind),
            cell(h.latest),
            cell(", ".join(h.versions)),
            cell(h.workspace),
            cell(h.description or ""),
        )
    console.print(table)


@harnesses_app.command()
@handle_errors
def show(
    harness_id: str = typer.Argument(...),
    version: str = typer.Argument("latest"),
    json: bool = ALREADY_JSON,
) -> None:
    """One harness version as JSON."""
    emit_json(svc.get_harness(local_context(), harness_id, version))


@harnesses_app.command()
@handle_errors
def delete(
    harness_id: str = typer.Argument(...),
    version: str = typer.Argument(..., help="An exact version."),
    json: bool = JSON_OPTION,
) -> None:
    """Tombstone one harness version (runs that used it stay readable)."""
    result = svc.delete_harness_version(local_context(), harness_id, version)
    if json:
        return emit_json(result)
    console.print(f"deleted harness {escape(result.id)}@{escape(result.version)}")
