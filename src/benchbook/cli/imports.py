"""``benchbook import``, ``preview`` and ``benchmarks list | show``: importing from the terminal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from benchbook.cli.app import (
    JSON_OPTION,
    app,
    cell,
    console,
    emit_json,
    err_console,
    escape,
    handle_errors,
    id_column,
    local_context,
    make_table,
    print_outcome,
    read_json_file,
    real_console,
    shorten,
)
from benchbook.contracts.imports import ImportProgress
from benchbook.errors import Conflict, ContentConflict, InvalidInput
from benchbook.services import imports as svc
from benchbook.services.context import Context

benchmarks_app = typer.Typer(help="The first-party benchmark catalog.")
app.add_typer(benchmarks_app, name="benchmarks")

FILE_OPTION = typer.Option(None, "--file", "-f", help="A local file or task folder to read.")
SPEC_OPTION = typer.Option(None, "--spec", help="An inline recipe JSON file (source + mapping).")


RECIPE_OPTION = typer.Option(
    None, "--recipe", help="A registered recipe: ID or ID@VERSION (own or _shared)."
)


def _request(
    benchmark: str | None, spec: Path | None, recipe: str | None = None, **fields: Any
) -> Any:
    if sum(x is not None for x in (benchmark, spec, recipe)) != 1:
        raise InvalidInput(
            "give a catalog benchmark id, --recipe ID[@VERSION] or --spec recipe.json (exactly one)"
        )
    payload: dict[str, Any] = {k: v for k, v in fields.items() if v not in (None, False)}
    if spec is not None:
        payload["spec"] = read_json_file(spec)
    elif recipe is not None:
        recipe_id, _, recipe_version = recipe.partition("@")
        payload["recipe"] = {"id": recipe_id} | (
            {"version": recipe_version} if recipe_version else {}
        )
    else:
        payload["benchmark"] = benchmark
    return svc.parse_import_request(payload)


@app.command("import")
@handle_errors
def import_(
    benchmark: str | None = typer.Argument(None, help="A catalog id (see `benchmarks list`)."),
    file: Path | None = FILE_OPTION,
    spec: Path | None = SPEC_OPTION,
    recipe: str | None = RECIPE_OPTION,
    dataset_id: str | None = typer.Option(None, "--id", help="Target dataset id."),
    version: str | None = typer.Option(None, help="Exact version to register."),
    bump: str | None = typer.Option(None, help="patch | minor | major from the latest version."),
    limit: int | None = typer.Option(None, min=1, help="Read at most this many rows."),
    shared: bool = typer.Option(False, help="Publish into the _shared tier."),
    json: bool = JSON_OPTION,
) -> None:
    """Import a benchmark (catalog id, --recipe ID[@VERSION] or --spec) from --file into a
    dataset version."""
    request = _request(
        benchmark,
        spec,
        recipe,
        id=dataset_id,
        version=version,
        bump=bump,
        limit=limit,
        shared=shared,
    )
    try:
        result = _run_import(
            local_context(), request, file, progress_bar=not json and console.is_terminal
        )
    except Conflict as exc:
        if bump is not None or not _changed_version(exc):
            raise
        raise Conflict(
            f"{exc.message}; to import changed rows, pass --bump patch|minor|major", exc.details
        ) from exc
    if json:
        return emit_json(result)
    state = "registered" if result.created else "revived" if result.revived else "unchanged"
    if result.identical_to is not None:
        state = "unchanged, identical to"
    for note in result.notes:  # how the source was read, e.g. a Hugging Face fallback
        err_console.print(f"note: {escape(note)}")
    print_outcome(state, result.id, result.version, result.cases)


def _changed_version(exc: Conflict) -> bool:
    """Whether ``exc`` says the version exists with different content (its details are the
    difference, ``services.version_storage``), not that the source's content is bad."""
    return not isinstance(exc, ContentConflict) and {"cases", "meta"} <= exc.details.keys()


def _run_import(ctx: Context, request: Any, file: Path | None, progress_bar: bool) -> Any:
    """Run the import, drawing a transient progress bar when asked (see :func:`bar_state`).

    Only on a terminal: elsewhere the bar would leave an empty line before the outcome line.
    """
    if not progress_bar:
        return svc.import_benchmark(ctx, request, file)
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (
        TextColumn("importing"),
        BarColumn(),
        TextColumn("{task.fields[share]}"),
        TextColumn("{task.fields[rows]} rows"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=real_console(), transient=True) as bar:
        task = bar.add_task("import", total=None, share="", rows="0")

        def report(p: ImportProgress) -> None:
            bar.update(task, **bar_state(p))

        return svc.import_benchmark(ctx, request, file, progress=report)


#: The bar's length in steps when only the share of the source read is known.
SHARE_STEPS = 1000


def bar_state(p: ImportProgress) -> dict[str, Any]:
    """What the import bar shows for one report: ``completed`` of ``total`` — rows of the known
    total; else thousandths of the source read (``fraction``: bytes of a local JSONL or CSV
    file), so a file's import shows how far it is although its row count is unknown; else no
    total (a pulsing bar) — with ``share`` (``"42%"``, or empty) and ``rows`` (``"12,345"`` or
    ``"12,345/100,000"``)."""
    rows = f"{p.rows_read:,}" + (f"/{p.total:,}" if p.total is not None else "")
    if p.total:
        done = min(p.rows_read / p.total, 1.0)
        return {"completed": p.rows_read, "total": p.total, "share": f"{done:.0%}", "rows": rows}
    if p.fraction is not None:
        steps = round(p.fraction * SHARE_STEPS)
        return {
            "completed": steps,
            "total": SHARE_STEPS,
            "share": f"{p.fraction:.0%}",
            "rows": rows,
        }
    return {"completed": 0, "total": None, "share": "", "rows": rows}


@app.command()
@handle_errors
def preview(
    benchmark: str | None = typer.Argument(None, help="A catalog id (see `benchmarks list`)."),
    file: Path | None = FILE_OPTION,
    spec: Path | None = SPEC_OPTION,
    recipe: str | None = RECIPE_OPTION,
    limit: int = typer.Option(5, min=1, max=svc.PREVIEW_ROWS, help="Rows to show (at most 20)."),
    json: bool = JSON_OPTION,
) -> None:
    """Show how a source's first rows would import; writes nothing."""
    request = _request(benchmark, spec, recipe, limit=limit)
    result = svc.preview_benchmark_source(local_context(), request, file)
    if json:
        return emit_json(result)
    console.print(cell(f"fields: {', '.join(result.fields)}"))
    console.print(cell(f"guess: {result.mapping_guess}"))
    console.print(f"[bold]{escape(result.assertion)}[/]")
    for warning in result.warnings:
        console.print(f"[yellow]warning[/]: {escape(warning)}")
    table = make_table("id", "task", "expected", "env")
    for case in result.cases:
        env = case.get("env")
        table.add_row(
            cell(case.get("id")),
            cell(shorten(str(case.get("task")), 80)),
            cell(shorten(str(case.get("expected") or ""), 30)),
            cell(env.get("kind") if isinstance(env, dict) else env),
        )
    console.print(table)


@benchmarks_app.command("list")
@handle_errors
def list_(json: bool = JSON_OPTION) -> None:
    """List the catalog: id, category, license, scoring kind."""
    items = svc.list_benchmarks(local_context())
    if json:
        return emit_json(items)
    # Ids stay whole on one line: the other columns wrap into what width is left.
    ids = id_column("id", [b.id for b in items])
    table = make_table(ids, "category", "source", "license", "scoring")
    for b in items:
        source = b.source.dataset or b.source.kind
        table.add_row(
            cell(b.id),
            cell(b.category),
            cell(source),
            cell(b.license or ""),
            cell(b.scoring.kind if b.scoring else ""),
        )
    console.print(table)


@benchmarks_app.command()
@handle_errors
def show(benchmark: str, json: bool = JSON_OPTION) -> None:
    """Show one catalog entry: origin, source, mapping, graders, scoring."""
    info = svc.get_benchmark(local_context(), benchmark)
    if json:
        return emit_json(info)
    console.print(f"[bold]{escape(info.id)}[/] {escape(info.version)} — {escape(info.category)}")
    if info.description:
        console.print(cell(info.description))
    if info.origin:
        for key, value in info.origin.model_dump(exclude_none=True).items():
            console.print(cell(f"  {key}: {value}"))
    if info.scoring:
        console.print(cell(f"scoring: {info.scoring.kind}"))
    console.print(
        cell(f"source: {info.source.model_dump(exclude_none=True, exclude_defaults=True)}")
    )
    console.print(cell(f"mapping: {info.mapping.model_dump(exclude_defaults=True)}"))
    graders = [g.id for g in info.graders] + [g.id for g in info.extra_graders]
    console.print(cell(f"graders: {', '.join(graders)}"))
