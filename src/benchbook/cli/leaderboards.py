"""``benchbook leaderboard DATASET[@VERSION]``: the results of runs as a ranked table (issue 30
§1); ``benchbook runs export`` (as files, §4) is :mod:`benchbook.cli.run_exports`'s."""

from __future__ import annotations

import typer

from benchbook import numbers
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
from benchbook.contracts.leaderboard import Leaderboard
from benchbook.services import leaderboards
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
        hidden = board.partial_hidden
        if hidden:
            runs = "run" if hidden == 1 else "runs"
            console.print(
                cell(
                    f"no run of {board.dataset} over all its cases yet; {hidden:,} subset"
                    f" {runs} (--include-partial shows them, ranked apart)"
                )
            )
        else:
            console.print(cell(f"no finished runs of {board.dataset} yet"))
        return
    for group in board.groups:
        graders = ", ".join(group.graders) or "the cases' own graders"
        subset = f" · subset: {group.subset}, ranked apart" if group.partial else ""
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
    if any(group.frontier for group in board.groups):  # the footnote only where a row has it
        console.print(cell("* on the cost–accuracy frontier (no other row is cheaper and better)"))


def _cases(cases: int, dataset_cases: int, partial: bool) -> str:
    return f"subset ({cases:,} of {dataset_cases:,})" if partial else f"{cases:,}"


def _errors(errors: int, grader_errors: int | None) -> str:
    if grader_errors is None:
        return f"{errors:,}"
    return f"{errors:,} + {grader_errors:,} grader"
