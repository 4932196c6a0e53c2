"""``benchbook leaderboard DATASET[@VERSION]`` and ``benchbook runs export``: the results of
runs as a ranked table and as files (issue 30 §1, §4)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from benchbook import numbers
from benchbook.cli.app import (
    JSON_OPTION,
    app,
    cell,
    console,
    count,
    emit_json,
    handle_errors,
    local_context,
    make_table,
)
from benchbook.cli.runs import runs_app
from benchbook.contracts.leaderboard import Leaderboard
from benchbook.errors import InvalidInput
from benchbook.row_formats import ROW_FORMATS, RowFormat, text_chunks, write_rows
from benchbook.services import leaderboards, run_exports
from benchbook.services.runs import split_ref


@app.command("leaderboard")
@handle_errors
def leaderboard(
    dataset: str = typer.Argument(..., metavar="DATASET[@VERSION]"),
    select: str = typer.Option("latest", help="latest, best or all scorecards per harness."),
    sort: str = typer.Option("pass_rate", help="pass_rate, cost, date or harness."),
    tag: str | None = typer.Option(None, help="Only scorecards with this tag."),
    plan: str | None = typer.Option(None, help="Only plans whose hash starts with this."),
    include_partial: bool = typer.Option(
        False, "--include-partial", help="Also show runs over a subset of the cases, apart."
    ),
    json: bool = JSON_OPTION,
) -> None:
    """Rank the harnesses run on a dataset version: pass rate, cost, tokens, latency."""
    dataset_id, version = split_ref(dataset, "dataset")
    board = leaderboards.get_leaderboard(
        local_context(),
        dataset_id,
        version,
        select,  # type: ignore[arg-type]
        sort,  # type: ignore[arg-type]
        tag,
        plan,
        include_partial,
    )
    if json:
        return emit_json(board)
    print_leaderboard(board)


def print_leaderboard(board: Leaderboard) -> None:
    """One table per grader plan; ``*`` marks the cost–accuracy frontier."""
    if not board.groups:
        console.print(cell(f"no finished runs of {board.dataset} yet"))
        return
    for group in board.groups:
        graders = ", ".join(group.graders) or "the cases' own graders"
        subset = " · subset runs, ranked apart" if group.partial else ""
        console.print(cell(f"{board.dataset} · plan {group.plan_hash[:12]} ({graders}){subset}"))
        table = make_table(
            "#",
            "harness",
            "cases",
            "pass rate",
            "95% CI",
            "pass@k",
            "cost/case",
            "tokens (total)",
            "p50 ms",
            "p95 ms",
        )
        table.add_column("errors")
        table.add_column("date")
        table.add_column("tags")
        for r in group.rows:
            ci = r.pass_interval
            table.add_row(
                cell(f"{r.rank}{'*' if r.frontier else ''}"),
                cell(r.harness),
                cell(_cases(r.cases, r.dataset_cases, r.partial)),
                cell(numbers.percent(r.pass_rate)),
                cell(f"{numbers.percent(ci.low)}–{numbers.percent(ci.high)}" if ci else ""),
                cell(" ".join(f"@{k} {numbers.percent(v)}" for k, v in r.pass_at_k.items())),
                cell(numbers.usd(r.cost_per_case_usd)),
                cell(numbers.tokens(r.tokens_input + r.tokens_output)),
                cell(numbers.number(r.latency_p50_ms)),
                cell(numbers.number(r.latency_p95_ms)),
                cell(_errors(r.errors, r.grader_errors)),
                cell(r.created_at.strftime("%Y-%m-%d")),
                cell(", ".join(r.tags)),
            )
        console.print(table)
    console.print(cell("* on the cost–accuracy frontier (no other row is cheaper and better)"))


def _cases(cases: int, dataset_cases: int, partial: bool) -> str:
    return f"subset ({cases:,} of {dataset_cases:,})" if partial else f"{cases:,}"


def _errors(errors: int, grader_errors: int | None) -> str:
    if grader_errors is None:
        return f"{errors:,}"
    return f"{errors:,} + {grader_errors:,} grader"


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
