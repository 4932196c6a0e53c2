"""Sub-commands of a versioned registered noun (issue 32): ``register FILE``, ``list``,
``show ID [VERSION]`` and ``delete ID VERSION`` for harnesses, recipes, graders and
environment recipes, built from one :class:`CliNoun` description.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

from benchbook.cli.app import (
    ALREADY_JSON,
    JSON_OPTION,
    cell,
    console,
    emit_json,
    escape,
    handle_errors,
    local_context,
    make_table,
    read_json_file,
)
from benchbook.transports.nouns import NounOperations

SEARCH = typer.Option(None, help="Substring of id or description.")


@dataclass(frozen=True)
class CliNoun:
    """What a noun's commands differ in.

    Attributes:
        ops: the noun and its service functions.
        title: how output names it (``registered harness h@1.0.0 in ws``).
        parse: a JSON file's payload → the item to register (raises InvalidInput).
        columns: the ``list`` table's headers; ``row`` gives a listed item's cells.
        docs: each command's help by ``register``, ``list``, ``show``, ``delete``.
        file_help: the ``register`` FILE argument's help.
        shared_help: the ``register --shared`` option's help.
        id_param: the id argument's name (shown in the usage line).
        id_help, version_help: ``show``'s argument helps.
        pretty_show: ``show`` prints indented JSON without null fields unless ``--json``
            (else the output is JSON anyway and ``--json`` is accepted for scripts).
    """

    ops: NounOperations
    title: str
    parse: Callable[[Any], Any]
    columns: tuple[str, ...]
    row: Callable[[Any], Sequence[Any]]
    docs: Mapping[str, str]
    file_help: str
    shared_help: str = "Publish into the _shared tier."
    id_param: str = "item_id"
    id_help: str | None = None
    version_help: str | None = None
    pretty_show: bool = False


def _command(sub: typer.Typer, name: str, doc: str, id_param: str, fn: Callable[..., Any]) -> None:
    """Add ``fn`` as command ``name`` with help ``doc``, its ``item_id`` parameter renamed
    ``id_param`` (the usage line shows the noun's own id name)."""
    signature = inspect.signature(fn, eval_str=True)
    if id_param != "item_id" and "item_id" in signature.parameters:
        params = [
            p.replace(name=id_param) if p.name == "item_id" else p
            for p in signature.parameters.values()
        ]
        inner = fn

        def renamed(**arguments: Any) -> Any:
            arguments["item_id"] = arguments.pop(id_param)
            return inner(**arguments)

        renamed.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
        fn = renamed
    fn.__name__, fn.__doc__ = name, doc
    sub.command(name)(handle_errors(fn))


def add_register(sub: typer.Typer, noun: CliNoun) -> None:
    """``register FILE [--shared] [--json]``."""

    def register(
        file: Path = typer.Argument(..., help=noun.file_help),
        shared: bool = typer.Option(False, help=noun.shared_help),
        json: bool = JSON_OPTION,
    ) -> None:
        result = noun.ops.register(local_context(), noun.parse(read_json_file(file)), shared)
        if json:
            return emit_json(result)
        state = "registered" if result.created else "unchanged"
        console.print(
            f"{state} {noun.title} [bold]{escape(result.id)}@{escape(result.version)}[/]"
            f" in {escape(result.workspace)}"
        )

    _command(sub, "register", noun.docs["register"], noun.id_param, register)


def add_list(sub: typer.Typer, noun: CliNoun) -> None:
    """``list [--search TEXT] [--json]``: a table of ``noun.columns``."""

    def list_(search: str | None = SEARCH, json: bool = JSON_OPTION) -> None:
        items = noun.ops.list(local_context(), search)
        if json:
            return emit_json(items)
        table = make_table(*noun.columns)
        for item in items:
            table.add_row(*map(cell, noun.row(item)))
        console.print(table)

    _command(sub, "list", noun.docs["list"], noun.id_param, list_)


def add_show(sub: typer.Typer, noun: CliNoun) -> None:
    """``show ID [VERSION]``: one version as JSON."""

    def show(
        item_id: str = typer.Argument(..., help=noun.id_help),
        version: str = typer.Argument("latest", help=noun.version_help),
        json: bool = JSON_OPTION if noun.pretty_show else ALREADY_JSON,
    ) -> None:
        item = noun.ops.get(local_context(), item_id, version)
        if json or not noun.pretty_show:
            return emit_json(item)
        console.print_json(item.model_dump_json(exclude_none=True))

    _command(sub, "show", noun.docs["show"], noun.id_param, show)


def add_delete(sub: typer.Typer, noun: CliNoun) -> None:
    """``delete ID VERSION``: tombstone one exact version."""
    delete = noun.ops.delete
    assert delete is not None

    def delete_(
        item_id: str = typer.Argument(...),
        version: str = typer.Argument(..., help="An exact version."),
        json: bool = JSON_OPTION,
    ) -> None:
        result = delete(local_context(), item_id, version)
        if json:
            return emit_json(result)
        console.print(f"deleted {noun.title} {escape(result.id)}@{escape(result.version)}")

    _command(sub, "delete", noun.docs["delete"], noun.id_param, delete_)


def add_commands(sub: typer.Typer, noun: CliNoun) -> None:
    """``register``, ``list``, ``show`` and (when the noun has one) ``delete``, in that order."""
    add_register(sub, noun)
    add_list(sub, noun)
    add_show(sub, noun)
    if noun.ops.deletable:
        add_delete(sub, noun)
