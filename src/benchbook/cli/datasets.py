"""``benchbook datasets …``, ``register``, ``validate``: the registry from the terminal."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer
from pydantic import JsonValue

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
    print_outcome,
    read_json_file,
    shorten,
)
from benchbook.contracts.dataset import Case
from benchbook.contracts.registry import VersionInfo
from benchbook.datasets.diff import changed_leaves as meta_leaves
from benchbook.datasets.flat import FORMATS, write_atomically, write_export
from benchbook.errors import InvalidInput
from benchbook.services import datasets as svc

datasets_app = typer.Typer(help="Browse, diff, export, tag and delete dataset versions.")
app.add_typer(datasets_app, name="datasets")


@app.command()
@handle_errors
def register(
    file: Path = typer.Argument(..., help="A dataset JSON file {id, version, cases, …}."),
    shared: bool = typer.Option(False, help="Publish into the _shared tier."),
    json: bool = JSON_OPTION,
) -> None:
    """Register a dataset version from a JSON file (identical content again is a no-op)."""
    result = svc.register_dataset(local_context(), svc.parse_dataset(read_json_file(file)), shared)
    if json:
        return emit_json(result)
    state = "registered" if result.created else "revived" if result.revived else "unchanged"
    print_outcome(state, result.id, result.version, result.cases)


@app.command()
@handle_errors
def validate(
    file: Path = typer.Argument(..., help="A dataset JSON file."),
    json: bool = JSON_OPTION,
) -> None:
    """Dry-run a register: report schema errors by path and whether it would conflict."""
    payload = read_json_file(file)
    if not isinstance(payload, dict):
        raise InvalidInput("a dataset file must hold a JSON object")
    report = svc.validate_dataset(local_context(), payload)
    if json:
        emit_json(report)
    elif report.ok:
        console.print(
            f"[green]ok[/]: {count(report.cases, 'case')}; existing versions: "
            f"{escape(', '.join(report.existing_versions) or 'none')}"
            + (" (identical version already stored)" if report.identical else "")
        )
    else:
        for issue in report.errors:
            console.print(f"[red]{escape(issue.path)}[/]: {escape(issue.message)}")
    if not report.ok:
        raise typer.Exit(1)


@datasets_app.command("list")
@handle_errors
def list_(
    search: str | None = typer.Option(None, "--search", "-s", help="Match id, description, tags."),
    owner: str = typer.Option("all", help="all | own | shared"),
    sort: str = typer.Option("name", help="name | updated | cases"),
    limit: int = typer.Option(50, min=1, max=svc.MAX_PAGE, help="Page size."),
    offset: int = typer.Option(0, min=0, help="Datasets to skip."),
    json: bool = JSON_OPTION,
) -> None:
    """List datasets visible in the workspace (own and _shared)."""
    if owner not in ("all", "own", "shared") or sort not in ("name", "updated", "cases"):
        raise InvalidInput("--owner is all|own|shared and --sort is name|updated|cases")
    page = svc.list_datasets(local_context(), search, owner, sort, limit, offset)  # type: ignore[arg-type]
    if json:
        return emit_json(page)
    table = make_table("id", "latest", "versions", "cases", "owner", "tags", "updated")
    for d in page.items:
        table.add_row(
            cell(d.id),
            cell(d.latest),
            f"{d.versions:,}",
            f"{d.cases:,}",
            cell(d.workspace),
            cell(", ".join([*d.tags, *(f"{t} → {v}" for t, v in d.version_tags.items())])),
            d.updated_at.strftime("%Y-%m-%d %H:%M"),
        )
    console.print(table)
    console.print(
        f"{count(page.total, 'dataset')}, {count(page.total_versions, 'version')}, "
        f"{count(page.total_cases, 'case')}"
    )


@datasets_app.command()
@handle_errors
def show(
    dataset_id: str,
    ref: str = typer.Argument("latest", help="Version, 'latest' or a tag."),
    limit: int = typer.Option(5, min=1, max=svc.MAX_PAGE, help="How many cases to show."),
    after: int | None = typer.Option(None, min=0, help="Cursor from the previous page."),
    json: bool = JSON_OPTION,
) -> None:
    """Show a version's metadata, lineage and first cases."""
    view = svc.get_dataset(local_context(), dataset_id, ref, after, limit)
    if json:
        return emit_json(view)
    v = view.version
    console.print(
        f"[bold]{escape(v.id)}@{escape(v.version)}[/] ({escape(v.workspace)}) — "
        f"{count(v.cases, 'case')}"
    )
    if v.description:
        console.print(cell(v.description))
    if v.tags or v.version_tags:
        console.print(cell(f"tags: {', '.join(v.tags)}  version tags: {', '.join(v.version_tags)}"))
    if v.produced_by:
        src = v.produced_by.source
        console.print(
            cell(
                f"produced by {v.produced_by.via} {v.produced_by.id}"
                + (f" from {src.kind} {src.dataset or src.file or ''}" if src else "")
            )
        )
    table = make_table("id", "env", "task", "expected")
    for c in view.cases:
        table.add_row(
            cell(c.id),
            cell(c.env.kind),
            cell(shorten(c.task, 80)),
            cell(shorten(_answer_text(c.expected), 30)),
        )
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
    table = make_table("version", "cases", "tags", "created by", "created")
    for i in infos:
        table.add_row(
            cell(i.version + (" (latest)" if i.is_latest else "")),
            f"{i.cases:,}",
            cell(", ".join(i.version_tags)),
            cell(i.created_by),
            i.created_at.strftime("%Y-%m-%d %H:%M"),
        )
    console.print(table)


@datasets_app.command()
@handle_errors
def diff(
    dataset_id: str,
    base: str,
    candidate: str = typer.Argument("latest"),
    show: int = typer.Option(10, min=0, help="How many cases of each kind to list."),
    json: bool = JSON_OPTION,
) -> None:
    """Compare two versions: added, removed, changed cases and metadata changes."""
    d = svc.diff_datasets(local_context(), dataset_id, base, candidate)
    if json:
        return emit_json(d)
    s = d.summary
    console.print(
        cell(
            f"{d.id} {d.base} → {d.candidate}: {s.added:,} added, {s.removed:,} removed, "
            f"{s.changed:,} changed, {s.unchanged:,} unchanged"
        )
    )
    for path, before, after in meta_leaves(d.meta):
        old, new = _short_pair(before, after)
        console.print(cell(f"  meta {path}: {old} → {new}"))
    for c in d.added[:show]:
        console.print(f"  [green]+ {escape(c.id)}[/] {escape(c.task[:70])}")
    _more(len(d.added), show, "added")
    for c in d.removed[:show]:
        console.print(f"  [red]- {escape(c.id)}[/] {escape(c.task[:70])}")
    _more(len(d.removed), show, "removed")
    for ch in d.changed[:show]:
        fields = ", ".join(f.field for f in ch.changes)
        console.print(f"  [yellow]~ {escape(ch.id)}[/] {escape(fields)}")
    _more(len(d.changed), show, "changed")


def _more(listed: int, show: int, kind: str) -> None:
    """``  … 1,009 more removed (--show N or --json to see them)`` when the list was cut."""
    if listed > show:
        console.print(f"  … {listed - show:,} more {kind} (--show N or --json to see them)")


def _short_pair(before: JsonValue, after: JsonValue, limit: int = 40) -> tuple[str, str]:
    """:func:`_short` of both sides; two long strings that share their start are shown from
    a little before their first difference, so the change is visible (``'…at school level'``
    → ``'…at middle-school level'``), not two equal-looking prefixes."""
    if isinstance(before, str) and isinstance(after, str) and min(len(before), len(after)) > limit:
        first = next(
            (i for i, (x, y) in enumerate(zip(before, after, strict=False)) if x != y),
            min(len(before), len(after)),
        )
        if first >= 12:
            start, end = max(0, first - 8), max(0, first - 8) + limit - 8

            def cut(v: str) -> str:
                return repr("…" + v[start:end] + ("…" if len(v) > end else ""))

            return cut(before), cut(after)
    return _short(before, limit), _short(after, limit)


def _short(value: JsonValue, limit: int = 40) -> str:
    """``repr`` of a value; strings longer than ``limit`` keep their first 12 characters + ``…``."""
    if isinstance(value, str) and len(value) > limit:
        return repr(value[:12] + "…")
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@datasets_app.command()
@handle_errors
def export(
    dataset_id: str,
    ref: str = typer.Argument("latest"),
    output: Path | None = typer.Option(
        None,
        "--output",
        "-o",
        help="File to write (jsonl; default stdout) or directory to create (parquet, hf).",
    ),
    format: str = typer.Option(
        "jsonl",
        "--format",
        "-f",
        help="jsonl: one canonical case per line. parquet, hf: a directory with data/test.parquet"
        " or data/test.jsonl of flat rows (id, input, target, tags, metadata), a README.md"
        " dataset card and lm_eval_task.yaml, read as is by datasets.load_dataset and lm-eval.",
    ),
    json: bool = typer.Option(
        False,
        "--json",
        help="With --output: print {id, version, format, path, cases, size_bytes} as JSON."
        " Without: the JSONL cases on stdout are the output.",
    ),
) -> None:
    """Export a version: JSONL cases (default), or a directory other harnesses read."""
    if format not in FORMATS:
        raise InvalidInput(f"--format must be one of {', '.join(FORMATS)}, got {format!r}")
    ctx = local_context()
    if format != "jsonl":
        if output is None:
            raise InvalidInput(f"--format {format} writes a directory: give it with --output")
        view = svc.get_dataset(ctx, dataset_id, ref, None, 1)
        exact = view.version.version
        parsed = (
            Case.model_validate_json(line) for line in svc.export_dataset(ctx, dataset_id, exact)
        )
        n = write_export(parsed, output, format, view.version)
        if json:
            return _emit_export(view.version, format, output, n, None)
        console.print(
            f"[green]exported[/] {count(n, 'case')} to {escape(str(output))}", soft_wrap=True
        )
        return
    lines = svc.export_dataset(ctx, dataset_id, ref)
    if output is None:
        for line in lines:
            sys.stdout.buffer.write(line)
        return
    counted = [0, 0]

    def counting() -> Iterator[bytes]:
        for line in lines:
            counted[0] += 1
            counted[1] += len(line)
            yield line

    write_atomically(output, counting())
    cases, size = counted
    if json:
        return _emit_export(
            svc.get_dataset(ctx, dataset_id, ref, None, 1).version, format, output, cases, size
        )
    console.print(
        cell(f"wrote {count(cases, 'case')} ({size:,} bytes) of {dataset_id}@{ref} to {output}"),
        soft_wrap=True,  # one line, the path whole (a wrapped path cannot be copied)
    )


def _emit_export(
    version: VersionInfo, format: str, output: Path, cases: int, size_bytes: int | None
) -> None:
    """``datasets export --json``: what was written where (``size_bytes`` of a JSONL file)."""
    emit_json(
        {
            "id": version.id,
            "version": version.version,
            "format": format,
            "path": str(output),
            "cases": cases,
            "size_bytes": size_bytes,
        }
    )


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
    if versions and all_:
        raise InvalidInput("name either versions to delete or --all, not both")
    result = svc.delete_dataset_versions(local_context(), dataset_id, None if all_ else versions)
    if json:
        return emit_json(result)
    console.print(cell(f"deleted {dataset_id}: {', '.join(result.deleted)}"))


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
    console.print(cell(f"{dataset_id}@{version} tags: {', '.join(info.version_tags) or '(none)'}"))


def _answer_text(value: Any) -> str:
    """``expected`` for a table cell: text as is, nothing for null, other JSON values as JSON."""
    if value is None or isinstance(value, str):
        return value or ""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
