"""Executing a stored run (SPEC H.4): claim it, stream its cases, write results as they finish.

Used by ``benchbook run`` / ``benchbook runs resume`` (in the CLI's own process) and by the
worker inside ``benchbook serve`` (:class:`RunWorker`). A run is held through a lease
(``claimed_by`` + ``heartbeat_at`` renewed every few seconds); a run whose holder died (its
process is gone, or its heartbeat is older than :data:`STALE_S`) can be taken over, and only
the (case, sample) pairs without a stored result run again.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets as random_source
import socket
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from datetime import timedelta
from pathlib import Path

import orjson
from pydantic import JsonValue
from sqlalchemy import Connection, Engine
from sqlalchemy.exc import IntegrityError

from benchbook.contracts.dataset import Case
from benchbook.contracts.run import Run, RunPlan, RunSettings
from benchbook.errors import Conflict
from benchbook.eval.executors.local import Execution, FinishedItem, WorkItem, execute
from benchbook.eval.grading import Grading
from benchbook.eval.pricing import load_pricing
from benchbook.eval.sync import run_sync
from benchbook.runtime import RuntimeConfig
from benchbook.services import scorecards, traces
from benchbook.services.context import Context, Principal
from benchbook.services.harnesses import load_harness
from benchbook.services.reproducibility import finish_record
from benchbook.services.runs import load_run, run_view
from benchbook.services.secrets import secret_values_for
from benchbook.settings import Settings
from benchbook.store import datasets as dataset_repo
from benchbook.store import harnesses as harness_repo
from benchbook.store import runs as repo
from benchbook.store.tables import utcnow

log = logging.getLogger(__name__)

#: A running run whose heartbeat is older than this (seconds) is taken to be orphaned.
STALE_S = 60.0
PAGE = 1000
_HOST = socket.gethostname()

Progress = Callable[[dict[str, int], float], None]
"""``progress(counts, spent_usd)`` after every written batch (counts as in RunCounts)."""


def worker_id() -> str:
    """``host:pid:nonce`` — who holds a run."""
    return f"{_HOST}:{os.getpid()}:{random_source.token_hex(3)}"


def holder_alive(row: repo.RunRow) -> bool:
    """Whether the process holding a running run may still be alive: on this host its pid must
    exist; elsewhere its heartbeat must be fresher than :data:`STALE_S`."""
    if not row.claimed_by:
        return False
    host, _, rest = row.claimed_by.partition(":")
    if host == _HOST:
        return _pid_alive(rest.partition(":")[0])
    beat = row.heartbeat_at
    return beat is not None and beat > utcnow() - timedelta(seconds=STALE_S)


def _pid_alive(pid_text: str) -> bool:
    """Whether a process exists and is not a zombie (killed, not yet reaped by its parent)."""
    try:
        pid = int(pid_text)
        os.kill(pid, 0)
    except (ProcessLookupError, ValueError):
        return False
    except PermissionError:
        return True
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True  # no procfs: existence is all we know
    state = next((ln for ln in status.splitlines() if ln.startswith("State:")), "")
    return "zombie" not in state and "\tZ" not in state


class LazySecrets(Mapping[str, str]):
    """Secret values for the run's creator, resolved (requester first) on first use."""

    def __init__(self, engine: Engine, settings: Settings, user_id: str, workspace: str) -> None:
        self._args = (engine, settings, user_id, workspace)
        self._cache: dict[str, str | None] = {}

    def __getitem__(self, name: str) -> str:
        if name not in self._cache:
            engine, settings, user_id, workspace = self._args
            found = secret_values_for(engine, settings, user_id, workspace, [name])
            self._cache[name] = found.get(name)
        value = self._cache[name]
        if value is None:
            raise KeyError(name)
        return value

    def __iter__(self) -> Iterator[str]:
        return iter([k for k, v in self._cache.items() if v is not None])

    def __len__(self) -> int:
        return sum(1 for v in self._cache.values() if v is not None)


class StoreVerdictCache:
    """Judge verdicts cached in the store, per workspace."""

    def __init__(self, engine: Engine, workspace: str) -> None:
        self.engine, self.workspace = engine, workspace

    def get(self, judge_hash: str, input_hash: str) -> dict[str, JsonValue] | None:
        with self.engine.connect() as conn:
            text = repo.get_verdict(conn, self.workspace, judge_hash, input_hash)
        if text is None:
            return None
        value: dict[str, JsonValue] = orjson.loads(text)
        return value

    def put(self, judge_hash: str, input_hash: str, verdict: dict[str, JsonValue]) -> None:
        with contextlib.suppress(IntegrityError), self.engine.begin() as conn:
            repo.put_verdict(
                conn, self.workspace, judge_hash, input_hash, orjson.dumps(verdict).decode()
            )


class StoreSink:
    """Writes finished items of one run; keeps its counters and cancel flag in memory."""

    def __init__(self, ctx: Context, row: repo.RunRow, worker: str, progress: Progress | None):
        self.ctx, self.run_id, self.worker, self.progress = ctx, row.id, worker, progress
        assert row.scorecard_id is not None
        self.scorecard_id = row.scorecard_id
        with ctx.engine.connect() as conn:
            self.counts = repo.counts(conn, row.id)
        self.spent = row.spent_usd
        self._stop = False

    def write(self, items: list[FinishedItem]) -> None:
        rows = [self._row(i) for i in items]
        with self.ctx.engine.begin() as conn:
            repo.write_results(conn, self.run_id, self.scorecard_id, rows)
            self._beat(conn)
        for i in items:
            r = i.result
            self.counts[r.status] += 1
            self.counts["done"] += r.status != "not_run"
            self.counts["passed"] += bool(r.passed)
            self.spent += r.cost_usd or 0.0
        if self.progress is not None:
            self.progress(dict(self.counts), self.spent)

    def _row(self, item: FinishedItem) -> repo.ResultRow:
        r = item.result
        blob, path, digest = (None, None, None)
        if r.trace is not None:
            blob, path, digest = traces.encode_trace(self.ctx.settings, r.trace)
        usage = r.trace.usage if r.trace is not None else None
        return repo.ResultRow(
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
        )

    def _beat(self, conn: Connection) -> None:
        cancel = repo.heartbeat(conn, self.run_id, self.worker)
        # None: another process took the run over; True: someone asked it to stop.
        self._stop = self._stop or cancel is None or cancel

    def cancelled(self) -> bool:
        return self._stop

    def heartbeat(self) -> None:
        with self.ctx.engine.begin() as conn:
            self._beat(conn)


def runtime_config(settings: Settings) -> RuntimeConfig:
    """The runtime's paths from the settings (work root default: ``<tmp>/benchbook-work``)."""
    work_root = settings.work_root or Path(tempfile.gettempdir()) / "benchbook-work"
    return RuntimeConfig(
        work_root=work_root, mirrors=settings.home / "mirrors", chromium=settings.chromium
    )


def _claim(ctx: Context, run_id: str, worker: str, force: bool) -> repo.RunRow | None:
    """Take the run, or None when it is already in a terminal state."""
    with ctx.engine.begin() as conn:
        row = load_run(conn, ctx, run_id)
        if row.status in ("finished", "failed", "cancelled", "budget_exhausted"):
            return None
        mine = row.claimed_by == worker
        if row.status == "running" and not mine and holder_alive(row) and not force:
            raise Conflict(
                f"run {run_id} is executing in another process ({row.claimed_by})",
                {"id": run_id, "claimed_by": row.claimed_by},
            )
        repo.set_run(
            conn,
            run_id,
            status="running",
            claimed_by=worker,
            heartbeat_at=utcnow(),
            started_at=row.started_at or utcnow(),
        )
        return repo.get_run(conn, run_id)


def _items(engine: Engine, row: repo.RunRow, settings: RunSettings) -> Iterator[WorkItem]:
    """The work items still missing, in dataset order, read a page at a time."""
    with engine.connect() as conn:
        done = repo.done_keys(conn, row.id, ("ok", "error", "not_run"))
    ids = set(settings.case_ids) if settings.case_ids is not None else None
    tags = set(settings.tags) if settings.tags is not None else None
    taken, after = 0, None
    while True:
        with engine.connect() as conn:
            page = dataset_repo.case_page(conn, row.dataset_pk, after, PAGE)
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
    sink = StoreSink(ctx, row, worker, progress)
    try:
        with ctx.engine.connect() as conn:
            harness = load_harness(harness_repo.harness_by_pk(conn, row.harness_pk))
        pricing, pricing_sha = load_pricing(ctx.settings.pricing_file)
        secrets = LazySecrets(ctx.engine, ctx.settings, row.created_by, row.workspace)
        ex = Execution(
            harness=harness,
            graders=plan.graders,
            runtime=runtime_config(ctx.settings),
            secrets=secrets,
            pricing=pricing,
            grading=Grading(secrets=secrets, verdicts=StoreVerdictCache(ctx.engine, row.workspace)),
            concurrency=settings.concurrency,
            timeout_s=settings.timeout_s,
            budget_usd=settings.budget_usd,
            spent_usd=row.spent_usd,
        )
        outcome = run_sync(execute(_items(ctx.engine, row, settings), ex, sink))
    except Exception as exc:
        log.exception("run %s failed", run_id)
        with ctx.engine.begin() as conn:
            repo.set_run(
                conn,
                run_id,
                status="failed",
                error=f"{type(exc).__name__}: {exc}",
                finished_at=utcnow(),
                claimed_by=None,
            )
        raise
    if sink.cancelled() and outcome == "finished":
        outcome = "cancelled"
    return finish_run(ctx, run_id, worker, outcome, pricing_sha)


def finish_run(ctx: Context, run_id: str, worker: str, outcome: str, pricing_sha: str) -> Run:
    """End a run ``worker`` holds: its scorecard's summary, the reproducibility record, the
    ``outcome`` status; a run taken over meanwhile is left to its new holder."""
    with ctx.engine.begin() as conn:
        current = repo.get_run(conn, run_id)
        if current is None or current.claimed_by != worker:
            return _view(ctx, run_id)  # taken over: the new holder finishes it
        scorecards.finalize(conn, ctx.settings, current, current.scorecard_id, pricing_sha)
        finished_at = utcnow()
        record = finish_record(conn, ctx.settings, current, finished_at)
        repo.set_run(
            conn,
            run_id,
            status=outcome,
            finished_at=finished_at,
            reproducibility=orjson.dumps(record).decode(),
            claimed_by=None,
            heartbeat_at=None,
        )
    return _view(ctx, run_id)


def _view(ctx: Context, run_id: str) -> Run:
    with ctx.engine.connect() as conn:
        return run_view(conn, load_run(conn, ctx, run_id))


def run_context(engine: Engine, settings: Settings, row: repo.RunRow) -> Context:
    """A context acting for a run's creator in the run's workspace (the worker's identity;
    the creator's right to start the run was checked by ``start_run``)."""
    return Context(
        principal=Principal(
            user_id=row.created_by,
            display_name=row.created_by,
            workspace=row.workspace,
            role="member",
        ),
        engine=engine,
        settings=settings,
    )


class RunWorker(threading.Thread):
    """Executes queued runs, and runs left ``running`` by a dead process, one at a time.

    Started by ``benchbook serve`` (unless ``BENCHBOOK_RUN_WORKER=false``). ``stop()`` stops
    picking up runs; a run in progress keeps its lease until the process exits and is then
    taken over like any orphan.
    """

    def __init__(self, engine: Engine, settings: Settings, poll_s: float = 1.0) -> None:
        super().__init__(name="benchbook-run-worker", daemon=True)
        self.engine, self.settings, self.poll_s = engine, settings, poll_s
        self._stop_event = threading.Event()

    def stop(self) -> None:
        """Stop picking up runs."""
        self._stop_event.set()

    def run(self) -> None:
        while not self._stop_event.is_set():
            try:
                picked = self.poll_once()
            except Exception:
                log.exception("run worker poll failed")
                picked = False
            if not picked:
                self._stop_event.wait(self.poll_s)

    def poll_once(self) -> bool:
        """Execute at most one claimable run; True when one was executed."""
        now = utcnow()
        with self.engine.connect() as conn:
            ids = repo.claimable_runs(conn, now - timedelta(seconds=STALE_S))
            ids += [i for i in repo.claimable_runs(conn, now) if i not in ids]
            rows = [r for r in (repo.get_run(conn, i) for i in ids) if r is not None]
        for row in rows:
            if row.status == "running" and holder_alive(row):
                continue
            ctx = run_context(self.engine, self.settings, row)
            try:
                execute_run(ctx, row.id, force=row.status == "running")
            except Conflict:
                continue
            except Exception:
                log.exception("run %s failed in the worker", row.id)
            return True
        return False
