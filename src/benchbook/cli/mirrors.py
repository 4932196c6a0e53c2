"""``benchbook mirrors add OWNER/NAME PATH|BUNDLE [--host] | list``: the local mirror cache."""

from __future__ import annotations

from pathlib import Path

import typer

from benchbook.cli.app import (
    JSON_OPTION,
    app,
    cell,
    console,
    count,
    emit_json,
    escape,
    handle_errors,
    local_context,
    make_table,
)
from benchbook.contracts.mirrors import Mirror
from benchbook.services import mirrors as svc

mirrors_app = typer.Typer(help="Local git mirrors that repository checkouts come from.")
app.add_typer(mirrors_app, name="mirrors")


def _size(size_bytes: int) -> str:
    return f"{size_bytes / (1 << 20):.1f} MiB"


def _line(m: Mirror) -> str:
    shallow = ", shallow" if m.shallow else ""
    return f"{count(m.commits, 'commit')}, {count(m.refs, 'ref')}{shallow}, {_size(m.size_bytes)}"


@mirrors_app.command()
@handle_errors
def add(
    repo: str = typer.Argument(..., help="owner/name, as in https://github.com/owner/name."),
    source: Path = typer.Argument(..., help="A git bundle or a local repository."),
    host: str = typer.Option("github.com", help="The git host the cases' URLs name."),
    json: bool = JSON_OPTION,
) -> None:
    """Seed (or update) the mirror of OWNER/NAME from a bundle or repository; no network."""
    result = svc.add_mirror(local_context(), repo, str(source), host)
    if json:
        return emit_json(result)
    state = "created" if result.created else "updated"
    m = result.mirror
    console.print(f"{state} mirror [bold]{escape(m.url)}[/] ({escape(_line(m))})")


@mirrors_app.command("list")
@handle_errors
def list_(json: bool = JSON_OPTION) -> None:
    """The mirrors: owner/name, host, commits, refs, size, last updated (paths: --json)."""
    items = svc.list_mirrors(local_context())
    if json:
        return emit_json(items)
    table = make_table("repo", "host", "commits", "refs", "size", "updated (UTC)")
    for m in items:
        table.add_row(
            cell(m.repo),
            cell(m.host),
            cell(f"{m.commits}{' (shallow)' if m.shallow else ''}"),
            cell(m.refs),
            cell(_size(m.size_bytes)),
            cell(m.updated_at.strftime("%Y-%m-%d %H:%M")),
        )
    console.print(table)
