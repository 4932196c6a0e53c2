"""``benchbook datasets …``, ``register``, ``validate``: the registry from the terminal."""

from __future__ import annotations

import sys
from pathlib import Path

import orjson
import typer
from rich.table import Table

from benchbook.cli.app import JSON_OPTION, app, console, emit_json, handle_errors, local_context
from benchbook.errors import InvalidInput
from benchbook.services import datasets as svc

datasets_app = typer.Typer(help="Browse, diff, export, tag and delete dataset versions.")
app.add_typer(datasets_app, name="datasets")


def _read_json(path: Path) -> object:
    try:
        return orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise InvalidInput(f"{path}: not valid JSON: {exc}") from exc
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from exc


@app.command()
@handle_errors
def register(
    file: Path = typer.Argument(..., help="A dataset JSON file {id, version, cases, …}."),
    shared: bool = typer.Option(False, help="Publish into the _shared tier."),
    json: bool = JSON_OPTION,
) -> None:
    """Register a dataset version from a JSON file (identical content again is a no-op)."""
    result = svc.register_dataset(local_context(), svc.parse_dataset(_read_json(file)), shared)
    if json:
        return emit_json(result)
    state = "registered" if result.created else "revived" if result.revived else "unchanged"
    console.print(f"{state}: [bold]{result.id}@{result.version}[/] ({result.cases} cases)")


@app.command()
@handle_errors
def validate(
    file: Path = typer.Argument(..., help="A dataset JSON file."),
    json: bool = JSON_OPTION,
) -> None:
    """Dry-run a register: report schema errors by path and whether it would conflict."""
    payload = _read_json(file)
    if not isinstance(payload, dict):
        raise InvalidInput("a dataset file must hold a JSON object")
    report = svc.validate_dataset(local_context(), payload)
    if json:
        emit_json(report)
    elif report.ok:
        console.print(
            f"[green]ok[/]: {report.cases} cases; existing versions: "
            f"{', '.join(report.existing_versions) or 'none'}"
            + (" (identical version already stored)" if report.identical else "")
        )
    else:
        for issue in report.errors:
            console.print(f"[red]{issue.path}[/]: {issue.message}")
    if not report.ok:
        raise typer.Exit(1)


@datasets_app.command("list")
@handle_errors
def list_(
    search: str | None = typer.Option(None, "--search", "-s", help="Match id, description, tags."),
    owner: str = typer.Option("all", help="all | own | shared"),
    sort: str = typer.Option("name", help="name | updated | cases"),
    limit: int = typer.Option(50),
    offset: int = typer.Option(0),
    json: bool = JSON_OPTION,
) -> None:
    """List datasets visible in the workspace (own and _shared)."""
    if owner not in ("all", "own", "shared") or sort not in ("name", "updated", "cases"):
        raise InvalidInput("--owner is all|own|shared and --sort is name|updated|cases")
    page = svc.list_datasets(local_context(), search, owner, sort, limit, offset)  # type: ignore[arg-type]
    if json:
        return emit_json(page)
    table = Table("id", "latest", "versions", "cases", "owner", "tags", "updated")
    for d in page.items:
        table.add_row(
            d.id,
            d.latest,
            str(d.versions),
            str(d.cases),
            d.workspace,
            ", ".join(d.tags),
            d.updated_at.strftime("%Y-%m-%d %H:%M"),
        )
    console.print(table)
    console.print(
        f"{page.total} datasets, {page.total_versions} versions, {page.total_cases} cases"
    )


@datasets_app.command()
@handle_errors
def show(
    dataset_id: str,
    ref: str = typer.Argument("latest", help="Version, 'latest' or a tag."),
    limit: int = typer.Option(5, help="How many cases to show."),
    after: int | None = typer.Option(None, help="Cursor from the previous page."),
    json: bool = JSON_OPTION,
) -> None:
    """Show a version's metadata, lineage and first cases."""
    view = svc.get_dataset(local_context(), dataset_id, ref, after, limit)
    if json:
        return emit_json(view)
    v = view.version
    console.print(f"[bold]{v.id}@{v.version}[/] ({v.workspace}) — {v.cases} cases")
    if v.description:
        console.print(v.description)
    if v.tags or v.version_tags:
        console.print(f"tags: {', '.join(v.tags)}  version tags: {', '.join(v.version_tags)}")
    if v.produced_by:
        src = v.produced_by.source
        console.print(
            f"produced by {v.produced_by.via} {v.produced_by.id}"
            + (f" from {src.kind} {src.dataset or src.file or src.url or ''}" if src else "")
        )
    table = Table("id", "env", "task", "expected")
    for c in view.cases:
        table.add_row(c.id, c.env.kind, c.task[:80], (c.expected or "")[:30])
    console.print(table)
    if view.next_after is not None:
        console.print(f"more: --after {view.next_after}")


@datasets_app.command()
@handle_errors
def versions(dataset_id: str, json: bool = JSON_OPTION) -> None:
    """List live versions, newest first."""
    infos = svc.list_dataset_versions(local_context(), dataset_id)
    if json:
        return emit_json(infos)
    table = Table("version", "cases", "tags", "created by", "created")
    for i in infos:
        table.add_row(
            i.version + (" (latest)" if i.is_latest else ""),
            str(i.cases),
            ", ".join(i.version_tags),
            i.created_by,
            i.created_at.strftime("%Y-%m-%d %H:%M"),
        )
    console.print(table)


@datasets_app.command()
@handle_errors
def diff(
    dataset_id: str,
    base: str,
    candidate: str = typer.Argument("latest"),
    show: int = typer.Option(10, help="How many cases of each kind to list."),
    json: bool = JSON_OPTION,
) -> None:
    """Compare two versions: added, removed, changed cases and metadata changes."""
    d = svc.diff_datasets(local_context(), dataset_id, base, candidate)
    if json:
        return emit_json(d)
    s = d.summary
    console.print(
        f"{d.id} {d.base} → {d.candidate}: {s.added} added, {s.removed} removed, "
        f"{s.changed} changed, {s.unchanged} unchanged"
    )
    for m in d.meta:
        console.print(f"  meta {m.field}: {m.before!r} → {m.after!r}")
    for c in d.added[:show]:
        console.print(f"  [green]+ {c.id}[/] {c.task[:70]}")
    for c in d.removed[:show]:
        console.print(f"  [red]- {c.id}[/] {c.task[:70]}")
    for ch in d.changed[:show]:
        console.print(f"  [yellow]~ {ch.id}[/] {', '.join(f.field for f in ch.changes)}")


@datasets_app.command()
@handle_errors
def export(
    dataset_id: str,
    ref: str = typer.Argument("latest"),
    output: Path | None = typer.Option(
        None, "--output", "-o", help="File to write (default stdout)."
    ),
) -> None:
    """Stream a version's cases as JSONL."""
    lines = svc.export_dataset(local_context(), dataset_id, ref)
    if output is None:
        for line in lines:
            sys.stdout.buffer.write(line)
        return
    with output.open("wb") as fh:
        for line in lines:
            fh.write(line)


@datasets_app.command()
@handle_errors
def delete(
    dataset_id: str,
    versions: list[str] = typer.Argument(None, help="Exact versions; omit with --all."),
    all_: bool = typer.Option(False, "--all", help="Delete every live version."),
    json: bool = JSON_OPTION,
) -> None:
    """Tombstone versions (all or nothing). Re-registering identical content revives them."""
    if not versions and not all_:
        raise InvalidInput("name versions to delete, or pass --all")
    result = svc.delete_dataset_versions(local_context(), dataset_id, None if all_ else versions)
    if json:
        return emit_json(result)
    console.print(f"deleted {dataset_id}: {', '.join(result.deleted)}")


@datasets_app.command()
@handle_errors
def tag(
    dataset_id: str,
    version: str,
    tags: list[str] = typer.Argument(None, help="The version's tags (replaces them; none clears)."),
    json: bool = JSON_OPTION,
) -> None:
    """Set a version's movable tags (a tag held by another version moves here)."""
    info = svc.set_dataset_version_tags(local_context(), dataset_id, version, tags or [])
    if json:
        return emit_json(info)
    console.print(f"{dataset_id}@{version} tags: {', '.join(info.version_tags) or '(none)'}")
