"""``benchbook graders|environments register FILE | list | show ID [VERSION] | delete ID
VERSION`` and ``benchbook endpoints add NAME URL | list | remove NAME``: the code and the
model endpoints admins register (issue 27)."""

from __future__ import annotations

from typing import Any

import typer

from benchbook.cli import registered
from benchbook.cli.app import (
    JSON_OPTION,
    app,
    cell,
    console,
    emit_json,
    handle_errors,
    local_context,
    make_table,
)
from benchbook.contracts.registered import EnvironmentRecipe, RegisteredGrader
from benchbook.services import endpoints as endpoints_svc
from benchbook.services.validation import parse_model
from benchbook.transports import nouns
from benchbook.transports.nouns import NounOperations

graders_app = typer.Typer(help="Registered graders: commands admins vouch for, versioned.")
environments_app = typer.Typer(help="Environment recipes: setup and test commands, versioned.")
endpoints_app = typer.Typer(help="Model endpoints judges and openai harnesses may call.")
app.add_typer(graders_app, name="graders")
app.add_typer(environments_app, name="environments")
app.add_typer(endpoints_app, name="endpoints")


def _noun(ops: NounOperations, title: str, model: type[Any]) -> registered.CliNoun:
    """The commands of a ``registered_code`` noun (graders, environment recipes)."""
    return registered.CliNoun(
        ops=ops,
        title=title,
        parse=lambda payload: parse_model(model, payload, title),
        columns=("id", "latest", "versions", "owner", "description"),
        row=lambda h: (h.id, h.latest, ", ".join(h.versions), h.workspace, h.description or ""),
        docs={
            "register": "Register a version (identical again: unchanged; different: conflict).",
            "list": "Own ids plus _shared ones not shadowed by own ids.",
            "show": "One version as JSON.",
            "delete": "Tombstone one version.",
        },
        file_help=f"A {title} JSON file {{id, version, …}}.",
        shared_help="Publish into the _shared tier (every workspace).",
    )


registered.add_commands(graders_app, _noun(nouns.GRADERS, "grader", RegisteredGrader))
registered.add_commands(
    environments_app, _noun(nouns.ENVIRONMENTS, "environment recipe", EnvironmentRecipe)
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
