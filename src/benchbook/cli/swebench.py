"""``benchbook swebench …``: SWE-bench grading of a saved run (SPEC I).

``predictions RUN --out PREDS.jsonl`` writes the official predictions (the patch = the run's
repository diff); ``evaluate RUN`` runs the official harness when Docker is there; ``import
RUN REPORT.json`` imports a harness report as ``swe-bench`` scores on a new scorecard.
"""

from __future__ import annotations

from pathlib import Path

import typer

from benchbook.cli.app import (
    JSON_OPTION,
    app,
    console,
    emit_json,
    err_console,
    escape,
    handle_errors,
    local_context,
    read_json_file,
)
from benchbook.cli.localization import RUN_ARG, SAMPLE_OPTION, print_skipped
from benchbook.contracts.scorecard import Scorecard
from benchbook.errors import InvalidInput
from benchbook.eval.contextbench_upstream import write_jsonl
from benchbook.services import swebench

swebench_app = typer.Typer(help="SWE-bench grading: official predictions, harness, reports.")
app.add_typer(swebench_app, name="swebench")


def print_card(card: Scorecard) -> None:
    """``scorecard sc_… : resolved N/M``."""
    console.print(
        f"scorecard [bold]{escape(card.id)}[/]: resolved {card.passed:,}/{card.n:,}"
        f" ({card.errors:,} errored)"
    )


@swebench_app.command()
@handle_errors
def predictions(
    run_id: str = RUN_ARG,
    out: Path = typer.Option(..., "--out", "-o", help="Where to write the predictions JSONL."),
    model: str | None = typer.Option(
        None, "--model", help="model_name_or_path (default: the harness id@version)."
    ),
    sample: int = SAMPLE_OPTION,
    json: bool = JSON_OPTION,
) -> None:
    """Write a saved run as official SWE-bench predictions JSONL."""
    result = swebench.export_swebench_predictions(local_context(), run_id, model, sample)
    n = write_jsonl(result.predictions, out)
    if json:
        skipped = [s.model_dump() for s in result.skipped]
        return emit_json({"out": str(out), "rows": n, "skipped": skipped})
    print_skipped(result.skipped, [])
    console.print(f"wrote {n} predictions to {escape(str(out))}")


@swebench_app.command("import")
@handle_errors
def import_(
    run_id: str = RUN_ARG,
    report: Path = typer.Argument(..., metavar="REPORT_JSON"),
    sample: int = SAMPLE_OPTION,
    json: bool = JSON_OPTION,
) -> None:
    """Import a SWE-bench harness report (run summary or report.json) onto a saved run."""
    data = read_json_file(report)
    if not isinstance(data, dict):
        raise InvalidInput(f"{report}: the report must be a JSON object", {"file": str(report)})
    card = swebench.import_swebench_report(local_context(), run_id, data, sample)
    if json:
        return emit_json(card)
    print_card(card)


@swebench_app.command()
@handle_errors
def evaluate(
    run_id: str = RUN_ARG,
    dataset_name: str = typer.Option("princeton-nlp/SWE-bench_Lite", "--dataset-name"),
    max_workers: int = typer.Option(4, "--max-workers", min=1, max=64),
    json: bool = JSON_OPTION,
) -> None:
    """Run the official SWE-bench harness on a saved run (needs Docker) and import its report.

    Exits 1 when the harness is unavailable or failed.
    """
    result = swebench.evaluate_swebench_run(local_context(), run_id, dataset_name, max_workers)
    if json:
        emit_json(result)
    elif result.scorecard is not None:
        print_card(result.scorecard)
    else:
        err_console.print(f"{result.status}: {result.message}", markup=False)
    if result.status != "graded":
        raise typer.Exit(1)
