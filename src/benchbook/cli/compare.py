"""``benchbook compare``: baseline vs candidate scorecard, and the CI gate (SPEC H.7).

Exit codes: 0 the gate passed (or no gate was asked for), 1 the gate failed, 2 not comparable
or bad input (unknown scorecard, run or tag; scorecards of different datasets).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Literal

import orjson
import typer

from benchbook.cli.app import app, err_console, local_context, print_error
from benchbook.contracts.comparison import Comparison, FailOn, GateResult
from benchbook.errors import BenchbookError, InvalidInput
from benchbook.eval.compare import gate
from benchbook.eval.compare_reports import render_junit, render_markdown, render_text
from benchbook.services import comparisons, scorecards
from benchbook.services.context import Context

Format = Literal["text", "json", "markdown"]


def _output(c: Comparison, verdict: GateResult | None, fmt: Format) -> str:
    if fmt == "json":
        body = {
            "comparison": c.model_dump(mode="json"),
            "gate": verdict.model_dump(mode="json") if verdict else None,
        }
        return orjson.dumps(body, option=orjson.OPT_INDENT_2).decode() + "\n"
    if fmt == "markdown":
        return render_markdown(c, verdict)
    return render_text(c, verdict)


def _promote(ctx: Context, c: Comparison, verdict: GateResult | None, tag: str) -> None:
    """Add ``tag`` to the candidate's scorecard — only when a gate ran and passed."""
    if verdict is None or not verdict.passed:
        err_console.print(f"not promoted: {c.candidate} keeps its tags ({tag!r} not moved)")
        return
    current = scorecards.get_scorecard(ctx, c.candidate).tags
    scorecards.set_scorecard_tags(ctx, c.candidate, [*current, tag])
    err_console.print(f"promoted: {c.candidate} is now {tag!r}", markup=False)


def _refs(refs: list[str], baseline: str | None) -> tuple[str, str]:
    if baseline is not None and len(refs) == 1:
        return baseline, refs[0]
    if baseline is None and len(refs) == 2:
        return refs[0], refs[1]
    raise InvalidInput(
        "give BASE and CAND, or --baseline TAG and CAND "
        f"(got {len(refs)} argument(s){' and --baseline' if baseline else ''})"
    )


@app.command("compare")
def compare(
    refs: list[str] = typer.Argument(
        ..., metavar="[BASE] CAND", help="Scorecard ids (sc_…) or run ids (run_…)."
    ),
    baseline: str | None = typer.Option(
        None, "--baseline", help="A scorecard tag (e.g. baseline) on CAND's dataset as BASE."
    ),
    fail_on: FailOn | None = typer.Option(
        None, "--fail-on", help="Gate: fail (exit 1) on any regression or a significant drop."
    ),
    allow_errors: bool = typer.Option(
        False, "--allow-errors", help="Do not fail the gate on pairs the candidate errored on."
    ),
    fmt: Format = typer.Option("text", "--format", help="text, json or markdown."),
    json: bool = typer.Option(False, "--json", help="The same as --format json."),
    junit_xml: Path | None = typer.Option(
        None, "--junit-xml", help="Also write JUnit XML here (one testcase per case)."
    ),
    seed: int = typer.Option(0, min=0, help="Bootstrap seed (reported)."),
    resamples: int = typer.Option(10_000, min=1, max=100_000, help="Bootstrap resamples."),
    promote: str | None = typer.Option(
        None, "--promote", help="Tag CAND's scorecard with this tag when the gate passes."
    ),
) -> None:
    """Compare a candidate scorecard with a baseline, pair by pair; optionally gate CI on it.

    Exit 0: passed; 1: the gate failed (regressed ids listed); 2: not comparable or bad input.
    """
    ctx = local_context()
    fmt = "json" if json else fmt
    try:
        base, cand = _refs(refs, baseline)
        if promote is not None and fail_on is None:
            raise InvalidInput("--promote needs --fail-on: only a passing gate promotes")
        c = comparisons.compare_scorecards(ctx, base, cand, seed, resamples)
        verdict = gate(c, fail_on, allow_errors) if fail_on is not None else None
        sys.stdout.write(_output(c, verdict, fmt))
        if junit_xml is not None:
            junit_xml.write_text(render_junit(c, allow_errors), encoding="utf-8")
        if promote is not None:
            _promote(ctx, c, verdict, promote)
    except BenchbookError as exc:
        print_error(exc, fmt == "json")
        raise typer.Exit(2) from exc
    except OSError as exc:
        err_console.print(f"error: cannot write {junit_xml}: {exc.strerror}", markup=False)
        raise typer.Exit(2) from exc
    if not c.comparable:
        raise typer.Exit(2)
    raise typer.Exit(verdict.exit_code if verdict is not None else 0)
