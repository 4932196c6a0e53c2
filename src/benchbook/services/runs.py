"""Run operations (SPEC H.4, H.9): start, cancel, resume and retry runs.

Reading runs back (``get_run``, ``list_runs``, …) is :mod:`benchbook.services.run_views`,
re-exported here.

A run evaluates one harness version on one dataset version: ``start_run`` resolves both (a
version, a tag or ``latest``), checks the plan's grader ids and the subset, and stores the run
``queued``; it never executes anything. Execution (:mod:`benchbook.services.run_execution`)
happens in the CLI's own process (``benchbook run``) or in the worker inside
``benchbook serve``; both write each finished (case, sample) as it finishes.
"""

from __future__ import annotations

import importlib.util
import secrets as random_source
from collections.abc import Iterator

import orjson
from sqlalchemy import Connection

from benchbook.contracts.dataset import Case, GraderSpec
from benchbook.contracts.harness import ExternalHarness, Harness, PythonHarness, secret_names
from benchbook.contracts.run import (
    Run,
    RunPlan,
    RunSettings,
    StartRunRequest,
)
from benchbook.datasets.versions import LATEST
from benchbook.errors import Conflict, InvalidInput
from benchbook.eval.executors.ray_cluster import INSTALL_HINT, ray_installed
from benchbook.eval.graders import check_grader_ids
from benchbook.eval.plan_checks import check_grader_values, check_plan
from benchbook.eval.plans import plan_hash
from benchbook.eval.scorecards import rated as rated  # the CLI's live bar asks it too
from benchbook.services.budgets import with_cap
from benchbook.services.code_rules import (
    CodeCheck,
    check_argv_files,
    check_reporter,
    may_bind_argv_files,
)
from benchbook.services.context import Context
from benchbook.services.harnesses import load_harness, resolve_harness
from benchbook.services.leases import holder_alive, lease_until
from benchbook.services.preflight import preflight_plan
from benchbook.services.reproducibility import start_record
from benchbook.services.resolve import resolve_version
from benchbook.services.run_views import MAX_PAGE as MAX_PAGE
from benchbook.services.run_views import get_run as get_run
from benchbook.services.run_views import list_runs as list_runs
from benchbook.services.run_views import load_run as load_run
from benchbook.services.run_views import run_view as run_view
from benchbook.services.run_views import summarize_dataset_runs as summarize_dataset_runs
from benchbook.services.sandboxing import check_sandbox, default_work_root, sandbox_policy
from benchbook.services.secrets import secret_values_for
from benchbook.store import runs as repo
from benchbook.store.case_reads import iter_case_bodies
from benchbook.store.events import add_event
from benchbook.store.lookups import iter_cases_of
from benchbook.store.run_results import delete_results
from benchbook.store.scorecards import insert_scorecard
from benchbook.store.tables import utcnow

TERMINAL = ("finished", "failed", "cancelled", "budget_exhausted")


def split_ref(text: str, what: str) -> tuple[str, str]:
    """``"id@ref"`` → ``(id, ref)``; a bare id means ``latest``.

    Raises:
        InvalidInput: empty id or ref.
    """
    rid, _, ref = text.partition("@")
    if not rid or (text.endswith("@")):
        raise InvalidInput(f"{what} must be 'id' or 'id@version' (got {text!r})", {what: text})
    return rid, ref or LATEST


def iter_cases(conn: Connection, version_pk: int) -> Iterator[tuple[int, Case]]:
    """``(position, case)`` for every case of a version in order, parsed one at a time."""
    for position, body in enumerate(iter_case_bodies(conn, version_pk)):
        yield position, Case.model_validate_json(body)


def select_cases(
    conn: Connection, version_pk: int, settings: RunSettings
) -> Iterator[tuple[int, Case]]:
    """The run's subset in dataset order: ``case_ids``, then ``tags`` (any), then ``limit``."""
    ids = set(settings.case_ids) if settings.case_ids is not None else None
    tags = set(settings.tags) if settings.tags is not None else None
    taken = 0
    for position, case in iter_cases_of(conn, version_pk, ids):  # by id: no full scan
        if ids is not None and case.id not in ids:
            continue
        if tags is not None and not tags.intersection(case.tags):
            continue
        if settings.limit is not None and taken >= settings.limit:
            return
        taken += 1
        yield position, case


def check_stored_grader_ids(case: Case) -> None:
    """A stored case's own graders must be known here, their config values usable.

    Raises:
        Conflict: the case names an unknown grader or one whose config no answer could be
            graded with (the request is well formed; the stored case is what it contradicts),
            naming the case and listing the known ids or the bad value.
    """
    try:
        check_grader_ids(case.graders)
        check_grader_values(case.graders)
    except InvalidInput as exc:
        raise Conflict(f"case {case.id!r}: {exc.message}", exc.details) from exc


def _plan_checks(
    conn: Connection, version_pk: int, request: StartRunRequest, code: CodeCheck
) -> int:
    """Check grader ids, who may run the code the plan and cases name, and the subset;
    returns how many cases the subset selects."""
    plan = list[GraderSpec](request.graders or [])
    check_plan(plan)
    code.plan(plan)
    settings = request.settings
    seen_ids: set[str] = set()
    selected = 0
    for position, case in select_cases(conn, version_pk, settings):
        selected += 1
        seen_ids.add(case.id)
        if not plan:
            check_stored_grader_ids(case)
        code.case(position, case, plan)
    if settings.case_ids is not None:
        unknown = sorted(set(settings.case_ids) - seen_ids)
        if unknown and settings.limit is None:
            shown = ", ".join(unknown[:20])
            raise Conflict(
                f"settings.case_ids: {len(unknown)} id(s) not in the dataset: {shown}",
                {"unknown": unknown[:100]},
            )
    if selected == 0:
        # 409, not 400: the request is well formed; the stored cases are what it contradicts.
        raise Conflict(
            "the subset selects no case (check settings.case_ids, settings.tags, settings.limit)",
            {"case_ids": settings.case_ids, "tags": settings.tags, "limit": settings.limit},
        )
    return selected


def start_run(ctx: Context, request: StartRunRequest) -> Run:
    """Plan a run and store it ``queued`` for the server's worker (nothing executes here).

    Args:
        request: ``{dataset: "id[@ref]", harness: "id[@ref]", graders?, settings}``.

    Returns:
        The run record (status ``queued``); poll it with ``get_run``.

    Raises:
        Forbidden: without ``runs:write``.
        NotFound: unknown dataset or harness, or no such (live) version or tag.
        InvalidInput: unknown grader ids in ``graders`` (the known ones listed), an unknown
            config key (named, the closest known key suggested), a judge without
            ``base_url``/``model``, or the ``ray`` executor without the ``ray`` extra
            installed (the message says how to install it).
        UpstreamError: with ``preflight``, a judge or ``openai`` harness endpoint did not
            answer (the URL and the cause named); nothing is stored.
        Conflict: what the request names contradicts what is stored — a subset selecting no
            case of the dataset version, unknown ``case_ids``, a case naming an unknown grader
            (when ``graders`` is not given), an ``external`` harness, a missing secret the
            harness names, a python harness whose module this server cannot import.
    """
    return create_run(ctx, request, holder=None)


def create_run(
    ctx: Context, request: StartRunRequest, holder: str | None, reported: bool = False
) -> Run:
    """:func:`start_run`, optionally already held by ``holder`` (the CLI executing it in its
    own process, so a server's worker never picks it up first); ``reported`` runs (results
    reported by an external harness, :func:`benchbook.services.run_reports.report_run`) may name
    an ``external`` harness. Not an operation."""
    ctx.require("runs:write")
    if not reported:  # a reported run executes nothing here
        check_sandbox(ctx.engine, ctx.settings)
    dataset_id, dataset_ref = split_ref(request.dataset, "dataset")
    harness_id, harness_ref = split_ref(request.harness, "harness")
    if request.settings.executor == "ray" and not ray_installed():
        # Before anything else: no run of this installation can use it, whatever the dataset.
        raise InvalidInput(
            "settings.executor: the ray executor needs the 'ray' extra, which is not installed"
            f" here: {INSTALL_HINT}",
            {"executor": "ray", "install": INSTALL_HINT},
        )
    with ctx.engine.connect() as conn:
        # The dataset and harness first: an unknown one is 404 whatever the settings say.
        version = resolve_version(conn, ctx.workspace, dataset_id, dataset_ref)
        hrow = resolve_harness(conn, ctx.workspace, harness_id, harness_ref)
        harness = load_harness(hrow)
        if reported:
            check_reporter(ctx, harness)
        code = CodeCheck(ctx, conn, version, executes=not reported)
        if not reported:
            code.harness(harness)
            policy = sandbox_policy(ctx.settings, default_work_root(ctx.settings))
            trusted = may_bind_argv_files(conn, hrow)
            check_argv_files(harness, policy, trusted, path="harness.config")
        selected = _plan_checks(conn, version.pk, request, code)
    if isinstance(harness, ExternalHarness) and not reported:
        raise Conflict(
            f"harness {hrow.harness_id}@{hrow.version} is external: report its results with"
            " report_run (POST /api/runs/report) instead of starting a run",
            {"harness": request.harness, "kind": "external"},
        )
    _check_importable(harness)
    names = secret_names(harness)
    found = secret_values_for(ctx.engine, ctx.settings, ctx.principal.user_id, ctx.workspace, names)
    missing = [n for n in names if n not in found]
    if missing:
        raise Conflict(
            f"harness {hrow.harness_id}@{hrow.version} needs secret(s) {', '.join(missing)};"
            " set them with `benchbook secrets set` or PUT /api/secrets/user/<name>",
            {"missing_secrets": missing},
        )
    plan = RunPlan(graders=list[GraderSpec](request.graders or []))
    if request.preflight:
        preflight_plan(ctx, plan.graders, harness)
    run_id = "run_" + random_source.token_hex(8)
    scorecard_id = "sc_" + random_source.token_hex(8)
    with ctx.engine.begin() as conn:
        repo.insert_run(
            conn,
            id=run_id,
            workspace=ctx.workspace,
            dataset_pk=version.pk,
            dataset_id=version.dataset_id,
            dataset_version=version.version,
            dataset_content_hash=version.content_hash,
            harness_pk=hrow.pk,
            harness_ref=f"{hrow.harness_id}@{hrow.version}",
            harness_hash=hrow.content_hash,
            plan=plan.model_dump_json(),
            plan_hash=plan_hash(plan),
            settings=request.settings.model_dump_json(),
            status="queued" if holder is None else "running",
            claimed_by=holder,
            heartbeat_at=utcnow() if holder else None,
            lease_expires_at=lease_until(ctx.settings) if holder else None,
            total=selected * request.settings.repeats,
            scorecard_id=scorecard_id,
            reproducibility=orjson.dumps(
                start_record(version, hrow, plan, request.settings, ctx.settings)
            ).decode(),
            created_by=ctx.principal.user_id,
            origin="reported" if reported else "native",
            reported_by=ctx.principal.user_id if reported else None,
        )
        add_event(
            conn,
            workspace=ctx.workspace,
            resource_type="dataset",
            resource_id=version.dataset_id,
            kind="run",
            actor=ctx.principal.user_id,
            details={
                "version": version.version,
                "run_id": run_id,
                "harness": f"{hrow.harness_id}@{hrow.version}",
            },
        )
        insert_scorecard(
            conn,
            id=scorecard_id,
            run_id=run_id,
            plan=plan.model_dump_json(),
            plan_hash=plan_hash(plan),
            created_by=ctx.principal.user_id,
        )
    return get_run(ctx, run_id)


def _check_importable(harness: Harness) -> None:
    """A python harness's module must be importable here (found, not executed)."""
    if not isinstance(harness, PythonHarness):
        return
    module = harness.config.callable.partition(":")[0]
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise Conflict(
            f"harness {harness.id}@{harness.version}: python module {module!r} cannot be"
            " imported by this server (is its package installed?)",
            {"callable": harness.config.callable},
        )


def cancel_run(ctx: Context, run_id: str) -> Run:
    """Ask a run to stop: a queued run is cancelled at once; a running one stops starting new
    cases (the ones in flight finish and are kept). Finished runs are returned unchanged.

    Raises:
        Forbidden: the run was started by another user and the caller is no admin.
    """
    ctx.require("runs:write")
    with ctx.engine.begin() as conn:
        row = load_run(conn, ctx, run_id)
        ctx.require_own(row.created_by, "runs:manage", f"run {run_id}")
        if row.status == "queued":
            repo.set_run(conn, run_id, status="cancelled", cancel_requested=True)
        elif row.status == "running":
            repo.set_run(conn, run_id, cancel_requested=True)
    return get_run(ctx, run_id)


def resume_run(ctx: Context, run_id: str, budget_usd: float | None = None) -> Run:
    """Queue a run again so only what is missing runs (SPEC H.4): results already stored are
    kept; ``not_run`` ones are run again. A finished run with nothing missing stays finished.

    Args:
        budget_usd: a new spend cap (USD, ≥ 0) for the rest of the run: what it may spend from
            now on, whatever it spent before; recorded with who set it and when. None keeps the
            current cap (the start settings' or the last one given).

    Raises:
        InvalidInput: a negative or non-finite ``budget_usd``.
        Conflict: the run is executing right now (a live worker holds it).
        Forbidden: the run was started by another user and the caller is no admin.
    """
    return requeue_run(ctx, run_id, retry=False, budget_usd=budget_usd, holder=None)


def retry_run(ctx: Context, run_id: str, budget_usd: float | None = None) -> Run:
    """Run the errored (case, sample) pairs of a run again, into the same run (their stored
    results are deleted first: only the run's starter or an admin may); ``budget_usd`` as in
    :func:`resume_run`."""
    return requeue_run(ctx, run_id, retry=True, budget_usd=budget_usd, holder=None)


def requeue_run(
    ctx: Context, run_id: str, *, retry: bool, budget_usd: float | None, holder: str | None
) -> Run:
    """:func:`retry_run` (``retry``) or :func:`resume_run`, optionally already held by
    ``holder`` (the CLI executing it in its own process): the run goes from its old state to
    ``running`` under ``holder`` in one transaction, so a server's worker polling the same
    database never takes it first. Not an operation.

    Deletes the run's ``not_run`` results (and, with ``retry``, its ``error`` ones) and queues
    it (with a new cap when ``budget_usd`` is given); only its starter or an admin (Forbidden
    otherwise).
    """
    statuses = ("error", "not_run") if retry else ("not_run",)
    ctx.require("runs:write")
    with ctx.engine.begin() as conn:
        row = load_run(conn, ctx, run_id)
        ctx.require_own(row.created_by, "runs:manage", f"run {run_id}")
        if row.status == "running" and holder_alive(
            row.claimed_by, row.lease_expires_at, ctx.settings
        ):
            raise Conflict(
                f"run {run_id} is executing now (held by {row.claimed_by}); cancel it first",
                {"id": run_id, "claimed_by": row.claimed_by},
            )
        assert row.scorecard_id is not None
        caps: dict[str, object] = {}
        if budget_usd is not None:
            caps["budget_caps"] = with_cap(row, budget_usd, ctx.principal.user_id)
        delete_results(conn, run_id, row.scorecard_id, statuses)
        repo.set_run(
            conn,
            run_id,
            **caps,
            status="queued" if holder is None else "running",
            cancel_requested=False,
            claimed_by=holder,
            heartbeat_at=utcnow() if holder else None,
            lease_expires_at=lease_until(ctx.settings) if holder else None,
            error=None,
            finished_at=None,
        )
    return get_run(ctx, run_id)
