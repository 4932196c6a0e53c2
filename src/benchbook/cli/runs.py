"""``benchbook run`` and ``benchbook runs …``: evaluate a harness on a dataset, in this process.

``benchbook run DATASET[@REF] --harness H[@REF]`` plans the run, holds it for this process and
executes it with a live progress bar (done/total, pass rate so far, cost so far, ETA), then
prints the scorecard. ``runs resume RUN`` finishes a run whose process died; ``runs retry``
reruns its errored cases; ``runs cancel`` asks a running one to stop.
"""

from __future__ import annotations

from typing import cast

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from benchbook import numbers
from benchbook.cli.app import (
    ALREADY_JSON,
    JSON_OPTION,
    app,
    cell,
    console,
    count,
    cut,
    emit_json,
    escape,
    handle_errors,
    id_column,
    local_context,
    make_table,
    real_console,
)
from benchbook.cli.run_output import (
    exit_on_grader_errors,
    pass_rate_line,
    print_localization,
    print_run,
)
from benchbook.cli.run_tables import ANSWER_WIDTH, run_errors, score_detail
from benchbook.cli.runs_group import GRADER_HELP, parse_grader, runs_app
from benchbook.contracts.run import ResultFilter, Run, RunSettings, StartRunRequest
from benchbook.services import run_execution, run_results, runs, scorecards
from benchbook.services.context import Context
from benchbook.services.validation import parse_model

app.add_typer(runs_app, name="runs")


def _execute(ctx: Context, run: Run, worker: str | None, force: bool, quiet: bool) -> Run:
    total = run.counts.total
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TextColumn("{task.fields[cost]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=real_console(), transient=True, disable=quiet) as bar:
        done0 = run.counts.done + run.counts.not_run
        task = bar.add_task(run.id, total=total, completed=done0, rate="", cost="")

        def report(counts: dict[str, int], spent_usd: float) -> None:
            n = counts["ok"] + counts["error"]
            rates = runs.rated(n, counts["ok"], counts["verdicts"])
            rate = f"pass {counts['passed'] / n:.1%}" if rates else ""
            failures = [(counts["error"], "error"), (counts["grader_errors"], "grader error")]
            rate = " ".join([rate, *(count(k, what) for k, what in failures if k)]).strip()
            bar.update(
                task,
                completed=counts["done"] + counts["not_run"],
                rate=rate,
                cost=numbers.usd(spent_usd) if spent_usd else "",
            )

        return run_execution.execute_run(ctx, run.id, report, force=force, worker=worker)


ALLOW_GRADER_ERRORS = typer.Option(
    False,
    "--allow-grader-errors",
    help="Exit 0 even when a grader could not decide some cases (counted as failed).",
)
NO_PREFLIGHT = typer.Option(
    False,
    "--no-preflight",
    help="Skip the one request to each judge and openai-harness endpoint before running.",
)


@app.command("run")
@handle_errors
def run_command(
    dataset: str = typer.Argument(
        ..., metavar="DATASET", help="DATASET or DATASET@VERSION|TAG|latest."
    ),
    harness: str = typer.Option(..., "--harness", help="HARNESS or HARNESS@VERSION|latest."),
    grader: list[str] = typer.Option([], "--grader", "-g", help=GRADER_HELP),
    concurrency: int = typer.Option(4, min=1, max=1024, help="Cases in flight."),
    repeats: int = typer.Option(1, min=1, max=100, help="Samples per case (pass@k)."),
    case_id: list[str] = typer.Option([], "--case-id", help="Only these case ids (repeatable)."),
    tag: list[str] = typer.Option([], "--tag", help="Only cases with one of these tags."),
    limit: int | None = typer.Option(None, min=1, help="Only the first N selected cases."),
    budget_usd: float | None = typer.Option(None, min=0, help="Stop starting cases at this spend."),
    timeout_s: int | None = typer.Option(None, min=1, help="Per-case timeout (seconds)."),
    executor: str = typer.Option(
        "local", "--executor", help="local (asyncio here) or ray (each case a Ray task)."
    ),
    ray_address: str | None = typer.Option(
        None,
        "--ray-address",
        help="With --executor ray: auto (default), ray://HOST:PORT or HOST:PORT.",
    ),
    ray_max_retries: int = typer.Option(
        3, "--ray-max-retries", min=0, max=20, help="Resubmits of a case whose Ray worker died."
    ),
    ray_num_cpus: float | None = typer.Option(
        None,
        "--ray-num-cpus",
        help="With --executor ray: CPUs a case without cpu_millicores asks Ray for"
        " (default: the cluster's CPUs / --concurrency, at most 1).",
    ),
    detach: bool = typer.Option(
        False, "--detach", help="Only queue it for the worker of a running `benchbook serve`."
    ),
    no_preflight: bool = NO_PREFLIGHT,
    allow_grader_errors: bool = ALLOW_GRADER_ERRORS,
    json: bool = JSON_OPTION,
) -> None:
    """Run HARNESS on every case of DATASET, grade the answers and print the scorecard."""
    ctx = local_context()
    settings = parse_model(
        RunSettings,
        {
            "concurrency": concurrency,
            "repeats": repeats,
            "case_ids": case_id or None,
            "tags": tag or None,
            "limit": limit,
            "budget_usd": budget_usd,
            "timeout_s": timeout_s,
            "executor": executor,
            "ray_address": ray_address,
            "ray_max_retries": ray_max_retries,
            "ray_num_cpus": ray_num_cpus,
        },
        "run settings",
    )
    request = StartRunRequest(
        dataset=dataset,
        harness=harness,
        graders=[parse_grader(g) for g in grader] or None,
        settings=settings,
        preflight=not no_preflight,
    )
    if detach:
        run = runs.start_run(ctx, request)
    else:
        worker = run_execution.worker_id(ctx.settings)
        run = runs.create_run(ctx, request, holder=worker)
        if not json:
            cases = count(run.counts.total // settings.repeats, "case")
            samples = f" × {count(settings.repeats, 'sample')}" if settings.repeats > 1 else ""
            console.print(f"run [bold]{escape(run.id)}[/]: {cases}{samples}")
        run = _execute(ctx, run, worker, False, json)
    if json:
        emit_json(run)
    else:
        print_run(ctx, run)
    if not detach and run.status == "failed":
        raise typer.Exit(1)  # every pair errored (or Benchbook failed): nothing was measured
    if not detach:
        exit_on_grader_errors(run.scorecard_id, allow_grader_errors)


runs_app.command("start", help="Run HARNESS on DATASET and print the scorecard (= benchbook run).")(
    run_command
)


@runs_app.command("list")
@handle_errors
def list_(
    dataset: str | None = typer.Option(None, help="Only runs of this dataset (id or id@version)."),
    harness: str | None = typer.Option(None, help="Only runs of this harness (id or id@version)."),
    status: str | None = typer.Option(None, help="Only runs with this status."),
    limit: int = typer.Option(50, min=1, max=500),
    before: str | None = typer.Option(None, help="Next page: the previous page's last run id."),
    json: bool = JSON_OPTION,
) -> None:
    """Runs of the workspace, newest first."""
    ctx = local_context()
    items = runs.list_runs(ctx, dataset, harness, status, limit, before)
    if json:
        return emit_json(items)
    tags = scorecards.tags_of_scorecards(ctx, [r.scorecard_id for r in items if r.scorecard_id])
    run_ids = id_column("run", [r.id for r in items])
    table = make_table(
        run_ids, "dataset", "harness", "status", "done", "errors", "pass rate", "cost", "tags"
    )
    table.add_column("started")
    for r in items:
        rate = f"{r.pass_rate:.1%}" if r.pass_rate is not None else ""
        table.add_row(
            cell(r.id),
            cell(r.dataset),
            cell(r.harness if r.origin == "native" else f"{r.harness} ({r.origin})"),
            cell(r.status),
            cell(f"{r.counts.done:,}/{r.counts.total:,}"),
            cell(run_errors(r)),
            cell(rate),
            cell(numbers.usd(r.spent_usd) if r.spent_usd else ""),
            cell(", ".join(tags.get(r.scorecard_id or "", []))),
            cell(r.started_at.strftime("%Y-%m-%d %H:%M") if r.started_at else ""),
        )
    console.print(table)


@runs_app.command()
@handle_errors
def show(run_id: str = typer.Argument(..., metavar="RUN_ID"), json: bool = JSON_OPTION) -> None:
    """One run with its scorecard summary."""
    ctx = local_context()
    run = runs.get_run(ctx, run_id)
    if json:
        return emit_json(run)
    print_run(ctx, run)


@runs_app.command()
@handle_errors
def results(
    run_id: str = typer.Argument(..., metavar="RUN_ID"),
    after: str | None = typer.Option(None, help="Cursor 'position:sample' of the previous page."),
    limit: int = typer.Option(50, min=1, max=500),
    outcome: str | None = typer.Option(
        None, help="passed, failed, errored, not_run; regressed or fixed with --baseline."
    ),
    search: str | None = typer.Option(None, help="Only case ids containing this text."),
    baseline: str | None = typer.Option(None, help="Scorecard id, run id or tag to compare."),
    scorecard: str | None = typer.Option(
        None, "--scorecard", help="One of the run's scorecards (a rescore); default its own."
    ),
    wide: bool = typer.Option(False, "--wide", help="Show whole answers (else cut at 60, …)."),
    json: bool = JSON_OPTION,
) -> None:
    """A page of a run's (case, sample) results with one scorecard's scores; ``expected`` and
    ``extracted`` are what the first grader that reports them compared."""
    chosen = cast(ResultFilter | None, outcome)
    ctx = local_context()
    items = run_results.list_run_results(
        ctx, run_id, after, limit, chosen, search, baseline, scorecard
    )
    if json:
        return emit_json(items)
    table = make_table(
        "case", "sample", "status", "passed", "answer", "expected", "extracted", "scores"
    )
    for r in items:
        scores = ", ".join(
            f"{s.metric}={numbers.number(s.value)}"
            if s.status == "ok"
            else f"{s.metric} {s.status}"
            for s in r.scores
        )
        answer = " ".join(r.answer.split())
        status = r.status if not r.error else f"{r.status}: {r.error}"
        if r.grader_error:
            status = f"grader error: {r.grader_error}"
        table.add_row(
            cell(r.case_id),
            cell(r.sample),
            cell(status),
            cell("" if r.passed is None else "yes" if r.passed else "no"),
            cell(answer if wide else cut(answer, ANSWER_WIDTH)),
            cell(score_detail(r.scores, "expected")),
            cell(score_detail(r.scores, "extracted")),
            cell(scores),
        )
    console.print(table)
    if len(items) == limit and items[-1].position is not None:
        last = items[-1]
        console.print(cell(f"next page: --after {last.position}:{last.sample}"))


runs_app.command("cases", help="A page of a run's (case, sample) results (= results).")(results)


@runs_app.command()
@handle_errors
def trace(
    run_id: str = typer.Argument(..., metavar="RUN_ID"),
    case_id: str = typer.Argument(..., metavar="CASE_ID"),
    sample: int = typer.Option(0, min=0),
    scorecard: str | None = typer.Option(
        None,
        "--scorecard",
        help="Print the result under this scorecard of the run (scores, verdict, trace).",
    ),
    json: bool = ALREADY_JSON,
) -> None:
    """The full trace of one (case, sample) as JSON; with --scorecard, the whole result
    (that scorecard's scores and verdict, grader error, trace)."""
    ctx = local_context()
    if scorecard is not None:
        return emit_json(run_results.get_run_result(ctx, run_id, case_id, sample, scorecard))
    emit_json(run_results.get_run_trace(ctx, run_id, case_id, sample))


def _rerun(ctx: Context, run: Run, force: bool, json: bool, worker: str | None = None) -> None:
    run = _execute(ctx, run, worker, force, json)
    if json:
        return emit_json(run)
    print_run(ctx, run)


BUDGET_OPTION = typer.Option(
    None,
    "--budget-usd",
    min=0,
    help="A new spend cap (USD) for the rest of the run: what it may spend from now on.",
)


@runs_app.command()
@handle_errors
def resume(
    run_id: str = typer.Argument(..., metavar="RUN_ID"),
    force: bool = typer.Option(False, help="Take the run over even if its holder looks alive."),
    budget_usd: float | None = BUDGET_OPTION,
    json: bool = JSON_OPTION,
) -> None:
    """Finish a run in this process: only the (case, sample) pairs without a result run."""
    ctx = local_context()
    current = runs.get_run(ctx, run_id)
    if current.status in ("queued", "running") and budget_usd is None:
        _rerun(ctx, current, force, json)
    else:
        _requeue_here(ctx, run_id, False, budget_usd, force, json)


@runs_app.command()
@handle_errors
def retry(
    run_id: str = typer.Argument(..., metavar="RUN_ID"),
    budget_usd: float | None = BUDGET_OPTION,
    json: bool = JSON_OPTION,
) -> None:
    """Run a run's errored (case, sample) pairs again, into the same run."""
    _requeue_here(local_context(), run_id, True, budget_usd, False, json)


def _requeue_here(
    ctx: Context, run_id: str, retry: bool, budget_usd: float | None, force: bool, json: bool
) -> None:
    """Requeue the run already held by this process, then execute it here: a server's worker
    polling the same database never sees it queued, so it cannot take it first."""
    worker = run_execution.worker_id(ctx.settings)
    run = runs.requeue_run(ctx, run_id, retry=retry, budget_usd=budget_usd, holder=worker)
    _rerun(ctx, run, force, json, worker)


@runs_app.command()
@handle_errors
def cancel(run_id: str = typer.Argument(..., metavar="RUN_ID"), json: bool = JSON_OPTION) -> None:
    """Ask a run to stop (in-flight cases finish and are kept)."""
    run = runs.cancel_run(local_context(), run_id)
    if json:
        return emit_json(run)
    if run.status == "running":
        console.print(f"cancel requested: run {escape(run.id)} stops starting cases")
    else:
        console.print(f"run {escape(run.id)}: {escape(run.status)}")


@runs_app.command()
@handle_errors
def rescore(
    run_id: str = typer.Argument(..., metavar="RUN_ID"),
    grader: list[str] = typer.Option(..., "--grader", "-g", help=GRADER_HELP),
    no_preflight: bool = NO_PREFLIGHT,
    allow_grader_errors: bool = ALLOW_GRADER_ERRORS,
    json: bool = JSON_OPTION,
) -> None:
    """Grade a finished run's saved traces with other graders (no harness call)."""
    ctx = local_context()
    graders = [parse_grader(g) for g in grader]
    card = scorecards.rescore_run(ctx, run_id, graders, preflight=not no_preflight)
    if json:
        emit_json(card)
    else:
        console.print(f"scorecard [bold]{escape(card.id)}[/] for {escape(run_id)}: ", end="")
        console.print(pass_rate_line(card), markup=False)
        print_localization(card.localization)
        shown = run_results.list_scorecard_results(ctx, card.id, limit=5, outcome="grader_error")
        for r in shown if card.grader_errors else []:
            console.print(
                cell(f"  {r.case_id}#{r.sample}: grader error: {r.grader_error}"), style="red"
            )
    exit_on_grader_errors(card.id, allow_grader_errors)


@runs_app.command("scorecard")
@handle_errors
def scorecard(
    scorecard_id: str = typer.Argument(..., metavar="SCORECARD_ID"), json: bool = ALREADY_JSON
) -> None:
    """One scorecard as JSON."""
    emit_json(scorecards.get_scorecard(local_context(), scorecard_id))


@runs_app.command("tag")
@handle_errors
def tag(
    ref: str = typer.Argument(..., metavar="SCORECARD_OR_RUN", help="sc_… or run_… (its own)."),
    tags: list[str] = typer.Argument(
        None, help="The scorecard's tags (replaces them; none clears)."
    ),
    json: bool = JSON_OPTION,
) -> None:
    """Set a scorecard's movable tags (baseline, prod); a tag held by another scorecard of the
    same dataset moves here. Only a finished run's scorecard can be tagged."""
    ctx = local_context()
    card_id = ref
    if ref.startswith("run_"):
        card_id = runs.get_run(ctx, ref).scorecard_id or ref
    card = scorecards.set_scorecard_tags(ctx, card_id, tags or [])
    if json:
        return emit_json(card)
    console.print(cell(f"{card.id} ({card.dataset}) tags: {', '.join(card.tags) or '(none)'}"))


# Registered on ``runs`` when imported, after the commands above (``runs --help`` lists them in
# registration order): ``runs export``; ``runs import-inspect`` and ``import-lm-eval`` (issue 31).
from benchbook.cli import run_exports, run_imports  # noqa: E402, F401
