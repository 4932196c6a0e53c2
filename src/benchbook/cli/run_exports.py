"""``benchbook runs export RUN_ID``: one row per (case, sample) of a run as a JSONL, CSV or
Parquet file, or JSONL/CSV on stdout (issue 30 §4)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from benchbook.cli.app import (
    JSON_OPTION,
    cell,
    console,
    count,
    emit_json,
    handle_errors,
    local_context,
)
from benchbook.cli.runs_group import runs_app
from benchbook.errors import InvalidInput
from benchbook.row_formats import ROW_FORMATS, RowFormat, text_chunks, write_rows
from benchbook.services import run_exports


@runs_app.command("export")
@handle_errors
def export(
    run_id: str = typer.Argument(..., metavar="RUN_ID"),
    scorecard: str | None = typer.Option(None, help="Whose scores (default: the run's own)."),
    format: str = typer.Option("jsonl", help="jsonl, csv or parquet."),
    out: Path = typer.Option(
        ..., "-o", "--out", help="The file to write; - for stdout (jsonl or csv)."
    ),
    json: bool = JSON_OPTION,
) -> None:
    """Write one row per (case, sample) with status, answer, scores, tokens, cost, latency."""
    if format not in ROW_FORMATS:
        raise InvalidInput(f"--format must be one of {', '.join(ROW_FORMATS)}", {"format": format})
    if str(out) == "-":
        if format == "parquet":
            raise InvalidInput(
                "--out -: parquet is binary and cannot be written to stdout; give a file",
                {"out": "-", "format": format},
            )
        columns, batches = run_exports.run_export_batches(local_context(), run_id, scorecard)
        stdout = sys.stdout.buffer
        for chunk in text_chunks(columns, batches, format_of(format)):
            stdout.write(chunk)
        stdout.flush()
        return None
    columns, batches = run_exports.run_export_batches(local_context(), run_id, scorecard)
    try:
        rows = write_rows(columns, batches, format_of(format), out)
    except OSError as exc:
        raise InvalidInput(f"cannot write {out}: {exc.strerror or exc}", {"out": str(out)}) from exc
    if json:
        return emit_json({"run_id": run_id, "rows": rows, "format": format, "out": str(out)})
    console.print(cell(f"wrote {count(rows, 'row')} to {out}"))


def format_of(text: str) -> RowFormat:
    """``text`` as a row format (checked against :data:`ROW_FORMATS` by the caller)."""
    return next(f for f in ROW_FORMATS if f == text)
