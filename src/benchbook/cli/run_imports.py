"""``benchbook runs import-inspect`` and ``runs import-lm-eval`` (issue 31): runs another tool
made, imported as ordinary runs (registered on ``runs`` when :mod:`benchbook.cli.runs` loads)."""

from __future__ import annotations

from pathlib import Path

import typer

from benchbook.cli.app import JSON_OPTION, console, emit_json, escape, handle_errors, local_context
from benchbook.cli.run_output import print_run
from benchbook.cli.runs_group import GRADER_HELP, parse_grader, runs_app
from benchbook.contracts.run_imports import ImportedRun, ImportInspectRequest, ImportLmEvalRequest
from benchbook.services import run_imports
from benchbook.services.context import Context

DATASET = typer.Option(
    ..., "--dataset", "-d", help="The dataset version the log ran on: ID@VERSION."
)
HARNESS = typer.Option(
    None, "--harness", help="Record the run under ID@VERSION (default derived from the log)."
)
GRADERS = typer.Option(None, "--grader", "-g", help=GRADER_HELP)
UNMATCHED = typer.Option(
    False,
    "--allow-unmatched",
    help="Leave out samples that match no case (listed) instead of refusing.",
)


def _print(ctx: Context, source: str, result: ImportedRun) -> None:
    """The run, Benchbook's scorecard and the tool's imported one, side by side."""
    console.print(
        f"{escape(source)}: {result.samples:,} sample(s), {result.matched_by_id:,} matched by id,"
        f" {result.matched_by_input:,} by input text, {len(result.unmatched):,} unmatched",
        markup=False,
    )
    print_run(ctx, result.run)
    card = result.imported_scorecard
    means = ", ".join(
        f"{name} {m.mean:.4g}" for name, m in card.metrics.items() if m.mean is not None
    )
    console.print(
        f"imported {result.tool} {result.tool_version or ''} scorecard {card.id}: {means}",
        markup=False,
    )


@runs_app.command("import-inspect")
@handle_errors
def import_inspect(
    logs: list[Path] = typer.Argument(..., metavar="LOG...", help="Inspect logs (.eval or .json)."),
    dataset: str = DATASET,
    harness: str | None = HARNESS,
    grader: list[str] = GRADERS,
    allow_unmatched: bool = UNMATCHED,
    json: bool = JSON_OPTION,
) -> None:
    """Import Inspect AI logs as runs of DATASET, one run per log: Benchbook's graders grade the
    answers; Inspect's own scores become the imported scorecard beside them."""
    ctx = local_context()
    request = ImportInspectRequest.model_validate(
        {
            "dataset": dataset,
            "harness": harness,
            "graders": [parse_grader(g) for g in grader or []] or None,
            "allow_unmatched": allow_unmatched,
        }
    )
    done = []
    for log in logs:
        result = run_imports.import_inspect_run(ctx, request, log, log.name)
        done.append(result)
        if not json:
            _print(ctx, str(log), result)
    if json:
        emit_json(done)


@runs_app.command("import-lm-eval")
@handle_errors
def import_lm_eval(
    results_dir: Path = typer.Argument(
        ..., metavar="RESULTS_DIR", help="lm_eval --output_path (or one samples_<task>_*.jsonl)."
    ),
    dataset: str = DATASET,
    task: str | None = typer.Option(
        None, "--task", help="The task to import when there are several."
    ),
    filter_name: str | None = typer.Option(
        None, "--filter", help="The filter whose filtered_resps is the answer (default the first)."
    ),
    harness: str | None = HARNESS,
    grader: list[str] = GRADERS,
    allow_unmatched: bool = UNMATCHED,
    json: bool = JSON_OPTION,
) -> None:
    """Import one lm-eval task's --log_samples output as a run of DATASET: the chosen filter's
    filtered_resps is the answer; each lm-eval metric becomes an imported score."""
    ctx = local_context()
    request = ImportLmEvalRequest.model_validate(
        {
            "dataset": dataset,
            "harness": harness,
            "graders": [parse_grader(g) for g in grader or []] or None,
            "allow_unmatched": allow_unmatched,
            "task": task,
            "filter": filter_name,
        }
    )
    result = run_imports.import_lm_eval_run(ctx, request, results_dir, results_dir.name)
    if json:
        return emit_json(result)
    _print(ctx, str(results_dir), result)
