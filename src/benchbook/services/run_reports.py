"""Runs reported by an external harness (issue 16 item 3): results graded like any run.

A user who keeps their own runner reports what it answered (``[{case_id, answer, sample?,
error?, trace?}]``) for ``harness="my-agent@1.2.0"``; :func:`report_run` checks every row
against the dataset version, stores the run (its harness registered as kind ``external`` on
first use), grades each answer with the run's plan or each case's own graders — the same
``grade_submission`` a run's executor calls — and finishes the run with its scorecard, so
scorecards, ``compare_scorecards`` and the CI gate work on it unchanged. Workspace graders
(``command``, ``tests-pass``) are ``skipped``: there is no workspace, as when rescoring.
"""

from __future__ import annotations

import asyncio

import orjson
from pydantic import JsonValue

from benchbook.contracts.dataset import Case, GraderSpec
from benchbook.contracts.run import (
    CaseResult,
    ReportedResult,
    ReportRunRequest,
    Run,
    RunSettings,
    StartRunRequest,
    Trace,
)
from benchbook.errors import InvalidInput, NotFound
from benchbook.eval.executors.local import FinishedItem
from benchbook.eval.grading import (
    Grading,
    Submission,
    decide_passed,
    grade_submission,
    grader_error_of,
)
from benchbook.eval.plan_checks import check_plan
from benchbook.eval.pricing import load_pricing, price_usd
from benchbook.eval.sync import run_sync
from benchbook.services.context import Context
from benchbook.services.harnesses import external_harness
from benchbook.services.leases import LeaseKeeper
from benchbook.services.resolve import resolve_version
from benchbook.services.run_execution import (
    StoreSink,
    StoreVerdictCache,
    finish_run,
    runtime_config,
    worker_id,
)
from benchbook.services.run_secrets import LazySecrets
from benchbook.services.runs import (
    check_stored_grader_ids,
    create_run,
    load_run,
    split_ref,
)
from benchbook.store import runs as repo
from benchbook.store.lookups import iter_cases_of
from benchbook.store.tables import utcnow

MAX_RESULTS = 100_000
GRADE_CONCURRENCY = 8
BATCH = 500
SHOWN = 20


def _check_rows(results: list[ReportedResult]) -> None:
    """Each (case, sample) once; InvalidInput naming the repeated rows by index."""
    first: dict[tuple[str, int], int] = {}
    repeats: list[dict[str, object]] = []
    for i, r in enumerate(results):
        key = (r.case_id, r.sample)
        if key in first:
            repeats.append(
                {
                    "path": f"results.{i}",
                    "message": f"case {r.case_id!r} sample {r.sample} repeats results.{first[key]}",
                }
            )
        else:
            first[key] = i
    if repeats:
        shown = "; ".join(f"{e['path']}: {e['message']}" for e in repeats[:SHOWN])
        raise InvalidInput(
            f"{len(repeats)} repeated (case, sample) row(s): {shown}", {"errors": repeats[:100]}
        )


def _cases(ctx: Context, request: ReportRunRequest) -> tuple[str, dict[str, tuple[int, Case]]]:
    """``(id@version, {case_id: (position, case)})`` of the reported cases; InvalidInput naming
    NotFound naming every row whose case id is not in the version."""
    dataset_id, ref = split_ref(request.dataset, "dataset")
    wanted = {r.case_id for r in request.results}
    found: dict[str, tuple[int, Case]] = {}
    with ctx.engine.connect() as conn:
        version = resolve_version(conn, ctx.workspace, dataset_id, ref)
        for position, case in iter_cases_of(conn, version.pk, wanted):  # by id: no full scan
            if case.id in wanted:
                found[case.id] = (position, case)
    exact = f"{version.dataset_id}@{version.version}"
    unknown = [
        {"path": f"results.{i}.case_id", "message": f"{r.case_id!r} is not a case of {exact}"}
        for i, r in enumerate(request.results)
        if r.case_id not in found
    ]
    if unknown:
        shown = "; ".join(f"{e['path']}: {e['message']}" for e in unknown[:SHOWN])
        # A missing reference is 404 (docs/api.md, "Rules for routes"), each row named.
        raise NotFound(
            f"{len(unknown)} result row(s) name unknown cases: {shown}", {"errors": unknown[:100]}
        )
    return exact, found


def report_run(ctx: Context, request: ReportRunRequest) -> Run:
    """Store and grade the results an external harness produced; the finished run.

    Args:
        request: ``{dataset: "id[@ref]", harness: "id@version", graders?, results: [{case_id,
            answer, sample?, error?, trace?}]}`` (1–100,000 rows, each (case, sample) once).

    Returns:
        The run, status ``finished``, with its scorecard (``scorecard_id``) computed by the
        same graders and summary as an executed run's.

    Raises:
        Forbidden: without ``runs:write``.
        NotFound: unknown dataset or version, or result rows naming cases the version does not
            have (each named by its row, ``results.3.case_id``).
        InvalidInput: more than 100,000 rows, a repeated (case, sample) (named by its row),
            unknown grader ids, or a harness that is not ``id@version`` with a SemVer version.
    """
    return store_reported_run(ctx, request)


def store_reported_run(
    ctx: Context, request: ReportRunRequest, imported: dict[str, JsonValue] | None = None
) -> Run:
    """:func:`report_run`, with ``imported`` (what another tool's log recorded: tool, version,
    task, model, sha256 …) kept in the run's reproducibility record under ``import``. The one
    write path of reported and imported runs (issue 31). Not an operation."""
    ctx.require("runs:write")
    if len(request.results) > MAX_RESULTS:
        raise InvalidInput(
            f"results: at most {MAX_RESULTS} rows per report, got {len(request.results)}",
            {"errors": [{"path": "results", "message": "too many rows"}]},
        )
    harness_id, _, harness_version = request.harness.partition("@")
    if not harness_id or not harness_version:
        raise InvalidInput(
            f"harness must be 'id@version' for a reported run (got {request.harness!r})",
            {"errors": [{"path": "harness", "message": "expected id@version"}]},
        )
    # The dataset first: an unknown one is 404 whatever the rows or graders say.
    exact, cases = _cases(ctx, request)
    _check_rows(request.results)
    check_plan(request.graders or [])
    if not request.graders:
        for _, case in cases.values():
            check_stored_grader_ids(case)
    hrow = external_harness(ctx, harness_id, harness_version)
    worker = worker_id()
    start = StartRunRequest(
        dataset=exact,
        harness=f"{hrow.harness_id}@{hrow.version}",
        graders=request.graders,
        settings=RunSettings(
            concurrency=1,
            repeats=max(r.sample for r in request.results) + 1,
            case_ids=sorted(cases),
        ),
    )
    run = create_run(ctx, start, holder=worker, reported=True)
    with ctx.engine.begin() as conn:
        repo.set_run(conn, run.id, total=len(request.results))
        if imported is not None:  # another tool's log: marked ``imported`` (issue 27 item 6)
            record = {**run.reproducibility, "import": imported}
            repo.set_run(
                conn, run.id, reproducibility=orjson.dumps(record).decode(), origin="imported"
            )
        row = load_run(conn, ctx, run.id)
    pricing, pricing_sha = load_pricing(ctx.settings.pricing_file)
    secrets = LazySecrets(ctx.engine, ctx.settings, ctx.principal.user_id, ctx.workspace)
    grading = Grading(secrets=secrets, verdicts=StoreVerdictCache(ctx.engine, ctx.workspace))
    mirrors = runtime_config(ctx.settings).mirrors
    sink = StoreSink(ctx, row, worker, None, secrets)
    slots = asyncio.Semaphore(GRADE_CONCURRENCY)

    async def one(reported: ReportedResult) -> FinishedItem:
        position, case = cases[reported.case_id]
        trace = (reported.trace or Trace()).model_copy(update={"answer": reported.answer})
        if trace.cost_usd is None and trace.model:
            trace.cost_usd = price_usd(pricing, trace.model, trace.usage)
        status = "error" if reported.error is not None else "ok"
        scores = []
        if status == "ok":
            specs = list[GraderSpec](request.graders or case.graders)
            async with slots:
                submission = Submission(reported.answer, trace, "ok", None, mirrors)
                scores = await grade_submission(specs, submission, case, grading)
        result = CaseResult(
            case_id=case.id,
            sample=reported.sample,
            status=status,
            error=reported.error,
            answer=reported.answer,
            passed=decide_passed(status, scores),
            grader_error=grader_error_of(scores),
            scores=scores,
            cost_usd=trace.cost_usd,
            duration_ms=trace.duration_ms,
            trace=trace,
        )
        return FinishedItem(position, result)

    async def grade_all() -> None:
        for i in range(0, len(request.results), BATCH):
            chunk = request.results[i : i + BATCH]
            items = await asyncio.gather(*(one(r) for r in chunk))
            await asyncio.to_thread(sink.write, list(items))

    try:
        with LeaseKeeper(run.id, sink.renew, ctx.settings.run_lease_renew_s):
            run_sync(grade_all())
    except BaseException as exc:  # never leave the run "running" for a worker to take over
        with ctx.engine.begin() as conn:
            repo.set_run(
                conn,
                run.id,
                status="failed",
                error=f"{type(exc).__name__}: {exc}",
                finished_at=utcnow(),
                claimed_by=None,
                lease_expires_at=None,
            )
        raise
    return finish_run(ctx, run.id, sink, "finished", pricing_sha)


__all__ = ["report_run", "store_reported_run"]
