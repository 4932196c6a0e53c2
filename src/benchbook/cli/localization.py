"""``benchbook localization …``: the upstream ContextBench scorer's inputs for a saved run, and
its numbers beside ours (SPEC I; LOCALIZATION §5).

``export RUN --gold GOLD.jsonl --pred PRED.jsonl`` writes the two JSONL files the scorer reads;
``score RUN --scorer-cmd "python -m contextbench.evaluate"`` runs it and prints ours vs upstream
per instance, every differing metric named. ``gold DATASET/CASE`` (or ``--patch FILE``) shows
the gold locations Benchbook derives. The CLI acts as the local admin, an installation
admin, so it may pass a scorer command.
"""

from __future__ import annotations

from pathlib import Path

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
    local_context,
    make_table,
)
from benchbook.contracts.localization import GoldLocations, InstanceComparison, SkippedCase
from benchbook.errors import InvalidInput
from benchbook.eval.contextbench_upstream import write_jsonl
from benchbook.services import gold_locations, localization

localization_app = typer.Typer(
    help="Code localization: the upstream ContextBench scorer's files and numbers beside ours."
)
app.add_typer(localization_app, name="localization")
RUN_ARG = typer.Argument(..., metavar="RUN_ID")
SAMPLE_OPTION = typer.Option(0, "--sample", min=0, help="Which repeat (one row per instance).")


def print_skipped(skipped: list[SkippedCase], warnings: list[str]) -> None:
    """One ``note:`` line per skipped case and warning, on stderr."""
    for s in skipped:
        err_console.print(
            f"note: skipped {s.case_id} (sample {s.sample}): {s.reason}", markup=False
        )
    for w in warnings:
        err_console.print(f"note: {w}", markup=False)


@localization_app.command()
@handle_errors
def export(
    run_id: str = RUN_ARG,
    gold: Path = typer.Option(..., "--gold", help="Where to write the gold JSONL."),
    pred: Path = typer.Option(..., "--pred", help="Where to write the prediction JSONL."),
    sample: int = SAMPLE_OPTION,
    json: bool = JSON_OPTION,
) -> None:
    """Write a saved run's gold and prediction JSONL in the upstream scorer's formats."""
    if pred.name.endswith("output.jsonl"):
        raise InvalidInput(
            f"--pred {pred.name}: the upstream scorer refuses prediction files whose name ends"
            " in output.jsonl; choose another name",
            {"pred": str(pred)},
        )
    out = localization.export_localization_run(local_context(), run_id, sample)
    n_gold, n_pred = write_jsonl(out.gold, gold), write_jsonl(out.predictions, pred)
    if json:
        return emit_json(
            {
                "gold": str(gold),
                "pred": str(pred),
                "rows": n_gold,
                "skipped": [s.model_dump() for s in out.skipped],
                "warnings": out.warnings,
            }
        )
    print_skipped(out.skipped, out.warnings)
    console.print(f"wrote {n_gold} gold rows to {escape(str(gold))}")
    console.print(f"wrote {n_pred} prediction rows to {escape(str(pred))}")


def _line_coverage(row: dict[str, object] | None) -> str:
    final = row.get("final") if row else None
    if not isinstance(final, dict):
        return "—"
    return f"{final['line']['coverage']:.3f} / {final['file']['coverage']:.3f}"


def _verdict(item: InstanceComparison) -> str:
    if item.agree:
        return "same"
    if item.ours_error or item.upstream_error:
        return f"ours: {item.ours_error or 'ok'}; upstream: {item.upstream_error or 'ok'}"
    shown = ", ".join(
        f"{d.metric} {d.ours:g}≠{d.upstream:g}"
        if d.ours is not None and d.upstream is not None
        else f"{d.metric} {d.ours}≠{d.upstream}"
        for d in item.differences[:4]
    )
    more = len(item.differences) - 4
    return f"DIFFERS: {shown}" + (f" (+{more} more)" if more > 0 else "")


@localization_app.command()
@handle_errors
def score(
    run_id: str = RUN_ARG,
    scorer_cmd: str | None = typer.Option(
        None,
        "--scorer-cmd",
        help="The upstream scorer, e.g. 'python -m contextbench.evaluate' (default: "
        "BENCHBOOK_CONTEXTBENCH_SCORER_CMD).",
    ),
    sample: int = SAMPLE_OPTION,
    timeout_s: float = typer.Option(
        localization.DEFAULT_SCORER_TIMEOUT_S, "--timeout-s", help="The scorer's time limit."
    ),
    json: bool = JSON_OPTION,
) -> None:
    """Run the upstream scorer on a saved run and show its numbers beside ours per instance.

    Exits 1 when the scorer failed or any instance differs.
    """
    result = localization.score_localization_upstream(
        local_context(), run_id, scorer_cmd, sample, timeout_s
    )
    if json:
        emit_json(result)
    else:
        table = make_table(
            "instance", "ours line/file cov.", "upstream line/file cov.", "comparison"
        )
        for item in result.instances:
            table.add_row(
                cell(item.instance_id),
                _line_coverage(item.ours),
                _line_coverage(item.upstream),
                cell(_verdict(item)),
            )
        console.print(table)
        print_skipped(result.skipped, [*result.warnings, *result.problems])
        if result.error:
            err_console.print(f"scorer failed: {result.error}", markup=False)
            err_console.print(result.stderr_tail, markup=False)
        console.print(
            f"{result.agreeing} instance(s) agree, {result.differing} differ"
            f" (scorer {result.duration_ms / 1000:.1f} s)"
        )
    if result.error or result.differing:
        raise typer.Exit(1)


def _lines(ranges: list[list[int]]) -> str:
    return ", ".join(f"{s}" if s == e else f"{s}-{e}" for s, e in ranges) or "-"


def print_gold(out: GoldLocations) -> None:
    """Per file: status, the line ranges (base / patched numbering) and changed definitions;
    then the spans the grader scores against."""
    for f in out.files:
        name = f.path if f.old_path == f.path else f"{f.old_path} → {f.path}"
        level = ", file level" if f.file_level else ""
        console.print(f"{escape(name)} ({f.status}{level})", markup=False)
        console.print(
            f"  removed {_lines(f.removed)} | inserted after {_lines(f.inserted)} | "
            f"enclosing {_lines(f.enclosing)} (base); added {_lines(f.added)} (patched)",
            markup=False,
        )
        for s in f.symbols:
            base = _lines([s.base_lines]) if s.base_lines else "-"
            console.print(f"  {s.change:8} {s.id} (base {base})", markup=False)
    console.print("scored spans (base):", markup=False)
    for span in out.spans:
        where = (
            "file level" if span["start_line"] == 0 else f"{span['start_line']}-{span['end_line']}"
        )
        console.print(f"  {span['file']}: {where}", markup=False)


@localization_app.command()
@handle_errors
def gold(
    case_ref: str | None = typer.Argument(
        None, metavar="[DATASET[@VERSION]/CASE_ID]", help="The case, e.g. swe-bench-lite/x-1."
    ),
    patch: Path | None = typer.Option(None, "--patch", help="Read this unified diff instead."),
    json: bool = JSON_OPTION,
) -> None:
    """Show the gold locations Benchbook derives from a case's patch or a patch file."""
    if (case_ref is None) == (patch is None):
        raise InvalidInput("give a case DATASET[@VERSION]/CASE_ID or --patch FILE", {})
    if patch is not None:
        out = gold_locations.derive_gold_locations(local_context(), patch=_read_patch(patch))
    else:
        assert case_ref is not None
        dataset, slash, case_id = case_ref.partition("/")
        if not slash or not dataset or not case_id:
            raise InvalidInput(
                f"case must be DATASET[@VERSION]/CASE_ID (got {case_ref!r})", {"case": case_ref}
            )
        out = gold_locations.derive_gold_locations(local_context(), dataset, case_id)
    if json:
        return emit_json(out.model_dump(mode="json"))
    for w in out.warnings:
        err_console.print(f"note: {w}", markup=False)
    print_gold(out)


def _read_patch(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"--patch {path}: cannot read it ({exc})", {"patch": str(path)}) from exc
