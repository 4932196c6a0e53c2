"""Executing a stored run (SPEC H.4): claim it, stream its cases, write results as they finish.

Used by ``benchbook run`` / ``benchbook runs resume`` (in the CLI's own process) and by the
runs worker inside ``benchbook serve`` and ``benchbook worker``
(:class:`~benchbook.services.run_worker.RunWorker`). A run is held through a lease
(``claimed_by`` + ``lease_expires_at``, renewed every ``run_lease_renew_s`` by a
:class:`~benchbook.services.leases.LeaseKeeper`); a run whose holder died (its process is gone
on this host, or its lease lapsed) is taken over, and only the (case, sample) pairs without a
stored result run again. Every result batch is written in the same transaction as a lease
renewal, so a holder that lost its run (taken over after its lease lapsed) writes nothing more:
each (case, sample) is stored once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator

import orjson
from sqlalchemy import Connection, Engine

from benchbook.contracts.dataset import Case
from benchbook.contracts.harness import secret_names
from benchbook.contracts.run import Run, RunPlan, RunSettings
from benchbook.errors import Conflict
from benchbook.eval.executors.local import Execution, FinishedItem, WorkItem, execute
from benchbook.eval.executors.ray_cluster import execute_ray
from benchbook.eval.grading import Grading
from benchbook.eval.pricing import load_pricing
from benchbook.eval.sync import run_sync
from benchbook.services import scorecards, traces
from benchbook.services.budgets import current_budget
from benchbook.services.code_rules import CodeResolver, may_bind_argv_files
from benchbook.services.context import Context
from benchbook.services.harnesses import load_harness
from benchbook.services.leases import LeaseKeeper, holder_alive, lease_until, worker_id
from benchbook.services.masking import mask_model, mask_text, masked_values
from benchbook.services.reproducibility import finish_record
from benchbook.services.run_secrets import LazySecrets
from benchbook.services.run_views import load_run, run_view
from benchbook.services.runtime_settings import runtime_config as runtime_config
from benchbook.services.sandboxing import check_sandbox
from benchbook.services.verdict_cache import StoreVerdictCache as StoreVerdictCache
from benchbook.services.verdicts import store_verdicts
from benchbook.settings import Settings
from benchbook.store import harnesses as harness_repo
from benchbook.store import run_leases, run_results
from benchbook.store import runs as repo
from benchbook.store.case_reads import case_page
from benchbook.store.tables import utcnow

log = logging.getLogger(__name__)

PAGE = 1000

Progress = Callable[[dict[str, int], float], None]
"""``progress(counts, spent_usd)`` after every written batch (counts as in RunCounts)."""

__all__ = ["execute_run", "holder_alive", "run_holder_alive", "worker_id"]


def run_holder_alive(row: repo.RunRow, settings: Settings) -> bool:
    """Whether the process holding a running run may still be alive (see
    :func:`benchbook.services.leases.holder_alive`)."""
    return holder_alive(row.claimed_by, row.lease_expires_at, settings)


class StoreSink:
    """Writes finished items of one run; keeps its counters and cancel flag in memory.

    Every batch is written in one transaction that first renews the run's lease (fencing): when
    another worker has taken the run over, the batch is dropped — that worker runs those pairs
    itself — and the sink reports ``cancelled()`` so no new pair starts here.
    """

    def __init__(
        self,
        ctx: Context,
        row: repo.RunRow,
        worker: str,
        progress: Progress | None,
        secrets: LazySecrets | None = None,
    ):
        self.ctx, self.run_id, self.worker, self.progress = ctx, row.id, worker, progress
        self.secrets = secrets
        assert row.scorecard_id is not None
        self.scorecard_id = row.scorecard_id
        with ctx.engine.connect() as conn:
            self.counts = run_results.counts(conn, row.id)
        self.spent = row.spent_usd
        self._stop = False
        self.lost = False

    def mask_values(self) -> list[str]:
        """The secret values stored results must not contain (every one resolved for the run
        so far, and the installation's ``HF_TOKEN``)."""
        seen = self.secrets.seen() if self.secrets is not None else []
        return masked_values([*seen, self.ctx.settings.hf_token])

    def write(self, items: list[FinishedItem]) -> None:
        values = self.mask_values()
        items = [
            FinishedItem(i.position, mask_model(i.result, values)) if values else i for i in items
        ]
        rows = [self._row(i) for i in items]
        with self.ctx.engine.begin() as conn:
            if not self.renew_in(conn):
                log.warning(
                    "run %s was taken over by another worker: %d result(s) not written here",
                    self.run_id,
                    len(rows),
                )
                return
            run_results.write_results(conn, self.run_id, self.scorecard_id, rows)
        for i in items:
            r = i.result
            self.counts[r.status] += 1
            self.counts["done"] += r.status != "not_run"
            self.counts["passed"] += bool(r.passed)
            self.counts["grader_errors"] += r.status == "ok" and r.grader_error is not None
            self.counts["verdicts"] += (
                r.status == "ok" and r.grader_error is None and r.passed is not None
            )
            self.spent += r.cost_usd or 0.0
        if self.progress is not None:
            self.progress(dict(self.counts), self.spent)

    def _row(self, item: FinishedItem) -> run_results.ResultRow:
        r = item.result
        blob, path, digest = (None, None, None)
        if r.trace is not None:
            blob, path, digest = traces.encode_trace(self.ctx.settings, r.trace)
        usage = r.trace.usage if r.trace is not None else None
        return run_results.ResultRow(
            case_id=r.case_id,
            sample=r.sample,
            position=item.position,
            status=r.status,
            error=r.error,
            answer=r.answer,
            passed=r.passed,
            cost_usd=r.cost_usd,
            input_tokens=usage.input_tokens if usage else 0,
            output_tokens=usage.output_tokens if usage else 0,
            duration_ms=r.duration_ms,
            trace=blob,
            trace_path=path,
            trace_sha256=digest,
            scores=orjson.dumps([s.model_dump(mode="json") for s in r.scores]).decode(),
            grader_error=r.grader_error,
            agent_limit=r.trace.limit if r.trace is not None else None,
        )

    def renew_in(self, conn: Connection) -> bool:
        """Renew the lease in ``conn``'s transaction; False once the run is someone else's."""
        now = utcnow()
        cancel = run_leases.renew_lease(
            conn, self.run_id, self.worker, now, lease_until(self.ctx.settings, now)
        )
        # None: another process took the run over; True: someone asked it to stop.
        self.lost = self.lost or cancel is None
        self._stop = self._stop or cancel is None or bool(cancel)
        return cancel is not None

    def cancelled(self) -> bool:
        return self._stop

    def renew(self) -> bool:
        """Renew the lease in its own transaction (the :class:`LeaseKeeper`'s call); False once
        the run is lost, which ends the keeper."""
        with self.ctx.engine.begin() as conn:
            return self.renew_in(conn)

    def heartbeat(self) -> None:
        """Nothing to do: the run's :class:`LeaseKeeper` renews the lease on its own clock
        (``run_lease_renew_s``), whatever the executor."""


def _claim(ctx: Context, run_id: str, worker: str, force: bool) -> repo.RunRow | None:
    """Take the run (compare-and-set), or None when it is already in a terminal state.

    Raises:
        Conflict: a live process holds it (and not ``force``), or another worker took it
            between the read and the update.
    """
    with ctx.engine.begin() as conn:
        row = load_run(conn, ctx, run_id)
        if row.status in ("finished", "failed", "cancelled", "budget_exhausted"):
            return None
        mine = row.claimed_by == worker
        alive = run_holder_alive(row, ctx.settings)
        if row.status == "running" and not mine and alive and not force:
            raise Conflict(
                f"run {run_id} is executing in another process ({row.claimed_by})",
                {"id": run_id, "claimed_by": row.claimed_by},
            )
        now = utcnow()
        if not run_leases.take_run(conn, row, worker, now, lease_until(ctx.settings, now)):
            raise Conflict(
                f"run {run_id} was claimed by another worker at the same moment",
                {"id": run_id},
            )
        return repo.get_run(conn, run_id)


def _items(
    engine: Engine, row: repo.RunRow, settings: RunSettings, code: CodeResolver
) -> Iterator[WorkItem]:
    """The work items still missing, in dataset order, read a page at a time, each case's
    registered graders and environment recipe resolved."""
    with engine.connect() as conn:
        done = run_results.done_keys(conn, row.id, ("ok", "error", "not_run"))
    ids = set(settings.case_ids) if settings.case_ids is not None else None
    tags = set(settings.tags) if settings.tags is not None else None
    taken, after = 0, None
    while True:
        with engine.connect() as conn:
            page = case_page(conn, row.dataset_pk, after, PAGE)
        if not page:
            return
        for position, case_id, body in page:
            if ids is not None and case_id not in ids:
                continue
            case = Case.model_validate_json(body)
            if tags is not None and not tags.intersection(case.tags):
                continue
            if settings.limit is not None and taken >= settings.limit:
                return
            taken += 1
            case = code.case(case)
            for sample in range(settings.repeats):
                if (case_id, sample) not in done:
                    yield WorkItem(case, sample, position)
        after = page[-1][0]


def execute_run(
    ctx: Context,
    run_id: str,
    progress: Progress | None = None,
    force: bool = False,
    worker: str | None = None,
) -> Run:
    """Execute a queued (or orphaned) run to its end in this process and return it.

    Args:
        progress: called after each written batch with the counts and the spend so far.
        force: take the run over even when its holder looks alive (``--force`` on the CLI).
        worker: the holder id the run was created for (:func:`start_local_run`), else new.

    Raises:
        NotFound: unknown run. Conflict: another live process is executing it.
    """
    ctx.require("runs:write")
    worker = worker or worker_id()
    row = _claim(ctx, run_id, worker, force)
    if row is None:
        return _view(ctx, run_id)
    settings = RunSettings.model_validate_json(row.settings)
    plan = RunPlan.model_validate_json(row.plan)
    secrets = LazySecrets(ctx.engine, ctx.settings, row.created_by, row.workspace)
    sink = StoreSink(ctx, row, worker, progress, secrets)
    with LeaseKeeper(run_id, sink.renew, ctx.settings.run_lease_renew_s):
        return _execute(ctx, row, settings, plan, sink)


def _execute(
    ctx: Context, row: repo.RunRow, settings: RunSettings, plan: RunPlan, sink: StoreSink
) -> Run:
    run_id = row.id
    try:
        check_sandbox(ctx.engine, ctx.settings)  # the settings may have changed since the start
        with ctx.engine.connect() as conn:
            hrow = harness_repo.harness_by_pk(conn, row.harness_pk)
            harness = load_harness(hrow)
            argv_files = may_bind_argv_files(conn, hrow)  # the author's rights now
        pricing, pricing_sha = load_pricing(ctx.settings.pricing_file)
        secrets = sink.secrets
        if secrets is None:  # (not ``or``: an empty mapping is falsy)
            secrets = LazySecrets(ctx.engine, ctx.settings, row.created_by, row.workspace)
        for name in secret_names(harness):  # resolved here, so masked whatever the executor
            secrets.get(name)
        code = CodeResolver(ctx.engine.connect, row.workspace)
        budget = current_budget(row, settings)
        ex = Execution(
            harness=harness,
            graders=code.plan(plan.graders),
            runtime=runtime_config(ctx.settings, argv_files=argv_files),
            secrets=secrets,
            pricing=pricing,
            grading=Grading(
                secrets=secrets,
                verdicts=StoreVerdictCache(ctx.engine, row.workspace),
                pricing=pricing,
            ),
            concurrency=settings.concurrency,
            timeout_s=settings.timeout_s,
            budget_usd=budget[0],
            spent_usd=budget[1],
        )
        items = _items(ctx.engine, row, settings, code)
        if settings.executor == "ray":
            address, retries = settings.ray_address or "auto", settings.ray_max_retries
            outcome = run_sync(
                execute_ray(items, ex, sink, address, retries, settings.ray_num_cpus)
            )
        else:
            outcome = run_sync(execute(items, ex, sink))
    except Exception as exc:
        log.exception("run %s failed", run_id)
        with ctx.engine.begin() as conn:
            if sink.renew_in(conn):  # still ours (and row-locked until this commits)
                repo.set_run(
                    conn,
                    run_id,
                    status="failed",
                    error=mask_text(f"{type(exc).__name__}: {exc}", sink.mask_values()),
                    finished_at=utcnow(),
                    claimed_by=None,
                    lease_expires_at=None,
                )
        raise
    if sink.cancelled() and outcome == "finished":
        outcome = "cancelled"
    return finish_run(ctx, run_id, sink, outcome, pricing_sha)


def finish_run(ctx: Context, run_id: str, sink: StoreSink, outcome: str, pricing_sha: str) -> Run:
    """End a run ``sink``'s worker holds: its scorecard's summary, the reproducibility record,
    the ``outcome`` status (``failed`` instead of ``finished`` when every pair that ran
    errored, the top error in ``error``); a run taken over meanwhile is left to its new
    holder (the lease is renewed in the same transaction, so nobody takes it over in
    between)."""
    with ctx.engine.begin() as conn:
        if not sink.renew_in(conn):
            return _view(ctx, run_id)  # taken over: the new holder finishes it
        current = repo.get_run(conn, run_id)
        assert current is not None
        card = scorecards.finalize(conn, ctx.settings, current, current.scorecard_id, pricing_sha)
        finished_at = utcnow()
        record = finish_record(conn, ctx.settings, current, finished_at)
        error = None
        if outcome == "finished" and card is not None and card.n and card.errors == card.n:
            # Nothing ran to the end: a failed run, never a finished one with a 0% pass rate.
            top = run_results.top_errors(conn, run_id, limit=1)
            cause = f": {top[0][0]}" if top else ""
            outcome, error = "failed", f"every (case, sample) errored ({card.errors:,}){cause}"
        repo.set_run(
            conn,
            run_id,
            status=outcome,
            error=error,
            finished_at=finished_at,
            reproducibility=orjson.dumps(record).decode(),
            claimed_by=None,
            heartbeat_at=None,
            lease_expires_at=None,
        )
        if current.scorecard_id is not None:  # its outcomes as one row for comparisons
            store_verdicts(conn, repo.get_run(conn, run_id) or current, current.scorecard_id)
    return _view(ctx, run_id)


def _view(ctx: Context, run_id: str) -> Run:
    with ctx.engine.connect() as conn:
        return run_view(conn, load_run(conn, ctx, run_id))
