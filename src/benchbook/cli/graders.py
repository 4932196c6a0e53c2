"""``benchbook graders|environments register FILE | list | show ID [VERSION] | delete ID
VERSION`` and ``benchbook endpoints add NAME URL | list | remove NAME``: the code and the
model endpoints admins register (issue 27)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

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
from benchbook.contracts.registered import EnvironmentRecipe, RegisteredGrader, RegisteredSummary
from benchbook.services import endpoints as endpoints_svc
from benchbook.services import environments as env_svc
from benchbook.services import graders as svc
from benchbook.services.validation import parse_model

graders_app = typer.Typer(help="Registered graders: commands admins vouch for, versioned.")
environments_app = typer.Typer(help="Environment recipes: setup and test commands, versioned.")
endpoints_app = typer.Typer(help="Model endpoints judges and openai harnesses may call.")
app.add_typer(graders_app, name="graders")
app.add_typer(environments_app, name="environments")
app.add_typer(endpoints_app, name="endpoints")

SHARED = typer.Option(False, help="Publish into the _shared tier (every workspace).")


def _print_summaries(items: list[RegisteredSummary]) -> None:
    table = make_table("id", "latest", "versions", "owner", "description")
    for h in items:
        table.add_row(
            cell(h.id),
            cell(h.latest),
            cell(", ".join(h.versions)),
            cell(h.workspace),
            cell(h.description or ""),
        )
    console.print(table)


def _noun_commands(
    sub: typer.Typer,
    title: str,
    model: type[Any],
    register: Callable[..., Any],
    list_: Callable[..., list[RegisteredSummary]],
    get: Callable[..., Any],
    delete: Callable[..., Any],
) -> None:
    """The four commands of a registered noun (one shape for graders and recipes)."""

    @sub.command("register")
    @handle_errors
    def register_cmd(
        file: Path = typer.Argument(..., help=f"A {title} JSON file {{id, version, …}}."),
        shared: bool = SHARED,
        json: bool = JSON_OPTION,
    ) -> None:
        """Register a version (identical again: unchanged; different: conflict)."""
        item = parse_model(model, read_json_file(file), title)
        result = register(local_context(), item, shared)
        if json:
            return emit_json(result)
        state = "registered" if result.created else "unchanged"
        console.print(
            f"{state} {title} [bold]{escape(result.id)}@{escape(result.version)}[/]"
            f" in {escape(result.workspace)}"
        )

    @sub.command("list")
    @handle_errors
    def list_cmd(
        search: str | None = typer.Option(None, help="Substring of id or description."),
        json: bool = JSON_OPTION,
    ) -> None:
        """Own ids plus _shared ones not shadowed by own ids."""
        items = list_(local_context(), search)
        if json:
            return emit_json(items)
        _print_summaries(items)

    @sub.command("show")
    @handle_errors
    def show_cmd(
        item_id: str = typer.Argument(...),
        version: str = typer.Argument("latest"),
        json: bool = ALREADY_JSON,
    ) -> None:
        """One version as JSON."""
        emit_json(get(local_context(), item_id, version))

    @sub.command("delete")
    @handle_errors
    def delete_cmd(
        item_id: str = typer.Argument(...),
        version: str = typer.Argument(..., help="An exact version."),
        json: bool = JSON_OPTION,
    ) -> None:
        """Tombstone one version."""
        result = delete(local_context(), item_id, version)
        if json:
            return emit_json(result)
        console.print(f"deleted {title} {escape(result.id)}@{escape(result.version)}")


_noun_commands(
    graders_app,
    "grader",
    RegisteredGrader,
    svc.register_grader,
    svc.list_graders,
    svc.get_grader,
    svc.delete_grader_version,
)
_noun_commands(
    environments_app,
    "environment recipe",
    EnvironmentRecipe,
    env_svc.register_environment,
    env_svc.list_environments,
    env_svc.get_environment,
    env_svc.delete_environment_version,
)


@endpoints_app.command("add")
@handle_errors
def endpoints_add(
    name: str = typer.Argument(..., help="A short name, e.g. openai."),
    url: str = typer.Argument(..., help="The API root, e.g. https://api.openai.com/v1."),
    shared: bool = typer.Option(False, help="The installation's (every workspace)."),
    json: bool = JSON_OPTION,
) -> None:
    """Register a model endpoint judges and openai harnesses may call."""
    endpoint = endpoints_svc.add_endpoint(local_context(), name, url, shared)
    if json:
        return emit_json(endpoint)
    console.print(cell(f"added endpoint {endpoint.name} {endpoint.url} in {endpoint.workspace}"))


@endpoints_app.command("list")
@handle_errors
def endpoints_list(json: bool = JSON_OPTION) -> None:
    """The workspace's endpoints and the installation's."""
    items = endpoints_svc.list_endpoints(local_context())
    if json:
        return emit_json(items)
    table = make_table("name", "url", "owner")
    for e in items:
        table.add_row(cell(e.name), cell(e.url), cell(e.workspace))
    console.print(table)


@endpoints_app.command("remove")
@handle_errors
def endpoints_remove(
    name: str = typer.Argument(...),
    shared: bool = typer.Option(False, help="The installation's."),
    json: bool = JSON_OPTION,
) -> None:
    """Remove an endpoint (new runs naming it are refused)."""
    endpoints_svc.remove_endpoint(local_context(), name, shared)
    if json:
        return emit_json({"removed": name})
    console.print(cell(f"removed endpoint {name}"))
