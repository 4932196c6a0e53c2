"""What ``benchbook run`` and ``benchbook runs …`` print about a run and its scorecard: the
outcome line with harness and grader errors, the top errors, the budget caps, the pass-rate line
(never a rate where nothing was decided), localization aggregates and judge spend; and the exit
status grader errors give (SPEC H.6)."""

from __future__ import annotations

from typing import Any

import typer

from benchbook import numbers
from benchbook.cli.app import cell, console, count, err_console, escape, local_context
from benchbook.contracts.run import Run
from benchbook.contracts.scorecard import Scorecard
from benchbook.services import scorecards
from benchbook.services.context import Context


def print_localization(aggregates: dict[str, Any] | None) -> None:
    """The scorecard's localization aggregates, one line a level: coverage and precision,
    micro (Σ∩/ΣG, Σ∩/ΣP) then macro over the scored instances."""
    if not aggregates:
        return
    console.print(
        f"localization: {aggregates['instances']:,} instance(s), {aggregates['errored']:,} "
        "errored (excluded; macro_all in --json counts them as 0) — coverage / precision, "
        "micro | macro",
        markup=False,
    )
    for level in ("file", "symbol", "span", "line"):
        micro, macro = aggregates["micro"][level], aggregates["macro"][level]
        console.print(
            f"  {level:<6} {micro['coverage']:.3f} / {micro['precision']:.3f} | "
            f"{macro['coverage']:.3f} / {macro['precision']:.3f}",
            markup=False,
        )


def print_run(ctx: Context, run: Run) -> None:
    """The run's outcome lines and its scorecard summary."""
    c = run.counts
    console.print(
        f"run [bold]{escape(run.id)}[/] {escape(run.status)}: {escape(run.harness)} on "
        f"{escape(run.dataset)} — {c.done:,}/{c.total:,} done, {count(c.error, 'error')}, "
        f"{count(c.grader_errors, 'grader error')}, {c.not_run:,} not run"
    )
    if run.origin != "native":
        console.print(
            cell(f"origin {run.origin}: results reported by {run.reported_by or 'unknown'},"
                 " not executed by this server"),
            style="yellow",
        )  # fmt: skip
    for item in run.top_errors:
        kind = "grader error: " if item.kind == "grader" else ""
        console.print(cell(f"  {item.count:,} × {kind}{item.error}"), style="red")
    for cap in run.budget_caps:
        at = cap.set_at.strftime("%Y-%m-%d %H:%M")
        console.print(cell(f"budget ${cap.budget_usd:g} set by {cap.set_by} at {at} UTC"))
    if run.scorecard_id:
        card = scorecards.get_scorecard(ctx, run.scorecard_id)
        console.print(pass_rate_line(card), markup=False)
        if card.limits:
            stopped = ", ".join(f"{name} {n:,}" for name, n in card.limits.items())
            console.print(f"ended at a limit (no answer, not errors): {stopped}")
        for k, v in card.pass_at_k.items():
            if len(card.pass_at_k) > 1:
                console.print(f"pass@{k} {v:.2%}   pass^{k} {card.pass_hat_k.get(k, 0.0):.2%}")
        print_localization(card.localization)
        if card.cost_usd:
            console.print(f"cost {numbers.usd(card.cost_usd)}", markup=False)
        if card.judge_tokens_input or card.judge_cost_usd:
            console.print(
                f"judges: {card.judge_tokens_input:,} input + {card.judge_tokens_output:,}"
                f" output tokens, {numbers.usd(card.judge_cost_usd)}",
                markup=False,
            )
        if card.latency.p50_ms is not None:
            console.print(
                f"latency p50 {card.latency.p50_ms:.0f} ms, p95 {card.latency.p95_ms:.0f} ms",
                markup=False,
            )


def pass_rate_line(card: Scorecard) -> str:
    """``pass rate 75.00% (150/200), 95% Wilson [..]``, ``no pass rate: …`` or ``nothing
    graded``; grader errors named apart (SPEC H.6: they count as failed, never as judged)."""
    failed = f"; {count(card.grader_errors, 'grader error')}" if card.grader_errors else ""
    if card.pass_rate is not None and card.pass_interval is not None:
        return (
            f"pass rate {card.pass_rate:.2%} ({card.passed:,}/{card.n:,}), 95% Wilson "
            f"[{card.pass_interval.low:.2%}, {card.pass_interval.high:.2%}]{failed}"
        )
    if card.grader_errors and card.grader_errors == card.n - card.errors:
        return f"no pass rate: every graded pair is a grader error{failed}"
    if card.n:
        return f"no pass rate: no grader gave a pass/fail verdict{failed}"
    return "nothing graded"


def exit_on_grader_errors(card_id: str | None, allow: bool) -> None:
    """Exit 1 (SPEC H.6) when the scorecard counts grader errors, unless ``allow``."""
    if allow or card_id is None:
        return
    card = scorecards.get_scorecard(local_context(), card_id)
    if card.grader_errors:
        err_console.print(
            f"[bold red]error[/] {count(card.grader_errors, 'grader error')} in scorecard"
            f" {escape(card.id)}: those cases were not graded (see the errors above;"
            " --allow-grader-errors accepts them)"
        )
        raise typer.Exit(1)
