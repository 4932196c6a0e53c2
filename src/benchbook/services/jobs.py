"""Import jobs (SPEC E.5): an import runs in the background with progress, a state and a result.

``start_import`` stores a ``queued`` job and hands :func:`services.imports.import_benchmark` to a
bounded thread pool; ``get_import`` / ``list_imports`` read jobs back (any process: they live in
the ``import_jobs`` table); ``cancel_import`` stops one between row batches. The job's progress
callback raises ``Cancelled`` when a cancel was requested, which rolls the import's transaction
back: a cancelled or failed import stores nothing.

SQLite holds one write lock for the whole import transaction, so on SQLite the pool runs one
import at a time and progress of a running job is kept in memory (read by ``get_import`` in the
same process); its state, final counts, result and error are always persisted. PostgreSQL also
persists progress while the job runs (every 0.25 s or 1000 rows), so any server on the same
database reads it.

A job is held by the process that runs it (``claimed_by``, a lease renewed every
``run_lease_renew_s`` on PostgreSQL): when that process dies, a runs worker of any server ends
the job ``failed`` (:func:`reap_orphaned_imports`) instead of leaving it ``running`` forever —
its transaction died with it, so nothing was stored.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from sqlalchemy import Engine

from benchbook.contracts.imports import ImportProgress, ImportRequest, ImportResult
from benchbook.contracts.jobs import FINISHED_STATES, ImportJob, JobError
from benchbook.datasets.sources import json_docs
from benchbook.errors import BenchbookError, Cancelled, Forbidden, InvalidInput, NotFound
from benchbook.services.context import Context
from benchbook.services.imports import import_benchmark
from benchbook.services.leases import (
    LeaseKeeper,
    holder_alive,
    lease_until,
    on_this_host,
    worker_id,
)
from benchbook.settings import Settings
from benchbook.store import jobs as repo

log = logging.getLogger(__name__)

MAX_IMPORT_WORKERS = 4
SAVE_EVERY_S = 0.25
SAVE_EVERY_ROWS = 1000
MAX_LIST = 200


@dataclass
class _Live:
    """A job running in this process: its cancel flag and latest progress."""

    cancel: threading.Event = field(default_factory=threading.Event)
    progress: ImportProgress | None = None


_LIVE: dict[str, _Live] = {}
_POOLS: dict[str, ThreadPoolExecutor] = {}
_POOL_LOCK = threading.Lock()
_HOLDERS: dict[int, str] = {}
"""This process's holder id for import jobs (keyed by pid: a forked child gets its own)."""
_KEEPERS: dict[int, LeaseKeeper] = {}


def _holder(settings: Settings) -> str:
    with _POOL_LOCK:
        return _HOLDERS.setdefault(os.getpid(), worker_id(settings))


def _keep_leases(ctx: Context) -> None:
    """Start this process's import-lease keeper once (PostgreSQL only: on SQLite a renewal
    would wait for the import's own write lock; there the holder's pid decides)."""
    if ctx.engine.dialect.name == "sqlite":
        return
    holder = _holder(ctx.settings)
    engine, settings = ctx.engine, ctx.settings

    def renew() -> bool:
        live = list(_LIVE)
        if live:
            with engine.begin() as conn:
                repo.renew_job_leases(conn, live, holder, lease_until(settings))
        return True

    with _POOL_LOCK:
        keeper = _KEEPERS.get(os.getpid())
        if keeper is None or not keeper.is_alive():
            keeper = LeaseKeeper("imports", renew, settings.run_lease_renew_s)
            _KEEPERS[os.getpid()] = keeper
            keeper.start()


def _pool(dialect: str) -> ThreadPoolExecutor:
    """One bounded pool per backend kind; SQLite's runs a single import at a time."""
    with _POOL_LOCK:
        if dialect not in _POOLS:
            workers = 1 if dialect == "sqlite" else MAX_IMPORT_WORKERS
            _POOLS[dialect] = ThreadPoolExecutor(workers, thread_name_prefix="benchbook-import")
        return _POOLS[dialect]


def _view(row: repo.JobRow) -> ImportJob:
    progress = ImportProgress(
        rows_read=row.rows_read, cases_built=row.cases_built, total=row.total, fraction=row.fraction
    )
    live = _LIVE.get(row.id)
    latest = live.progress if live is not None and row.state == "running" else None
    if latest is not None and latest.rows_read >= progress.rows_read:
        progress = latest
    result = ImportResult.model_validate_json(row.result) if row.result else None
    if result is not None and result.notes and not progress.notes:
        progress = progress.model_copy(update={"notes": result.notes})  # the source's read log
    return ImportJob(
        id=row.id,
        workspace=row.workspace,
        state=row.state,
        request=json_docs.loads(row.request.encode()),  # integers beyond 64 bits stay exact
        file_name=row.file_name,
        progress=progress,
        result=result,
        error=JobError.model_validate_json(row.error) if row.error else None,
        cancel_requested=row.cancel_requested or (live is not None and live.cancel.is_set()),
        created_by=row.created_by,
        created_at=row.created_at,
        started_at=row.started_at,
        updated_at=row.updated_at,
        finished_at=row.finished_at,
    )


def _load(ctx: Context, job_id: str) -> repo.JobRow:
    with ctx.engine.connect() as conn:
        row = repo.find_job(conn, ctx.workspace, job_id)
    if row is None:
        raise NotFound(f"import job {job_id!r} not found", {"job": job_id})
    return row


def _adopt(file: Path) -> Path:
    """Move an uploaded temporary file to a name the job owns (the upload's cleanup then
    finds nothing to delete)."""
    target = file.with_name(f"benchbook-job-{secrets.token_hex(6)}-{file.name}")
    os.replace(file, target)
    return target


def start_import(
    ctx: Context,
    request: ImportRequest,
    file: Path | None = None,
    file_name: str | None = None,
    own_file: bool = False,
) -> ImportJob:
    """Start an import (SPEC E.5) in the background and return its ``queued`` job.

    Args:
        request: what to import (SPEC E.1), as for ``import_benchmark``.
        file: a local file or folder to read (``--file``), or an uploaded temporary file.
        file_name: the upload's client file name (its extension picks the format).
        own_file: the job takes ``file`` over (moves it) and deletes it when it finishes;
            transports pass True for uploads that would otherwise be deleted with the request.

    Raises:
        Forbidden: without ``datasets:write``, or ``shared`` without publish rights. Every
            other failure (bad rows, unknown benchmark, Hugging Face errors, conflicts) is
            recorded as the job's ``error`` envelope with state ``failed``.
    """
    ctx.require("datasets:write")
    ctx.target_workspace(request.shared)
    job_id = f"imp_{secrets.token_hex(12)}"
    saved = request.model_dump(mode="json", exclude={"text"}, exclude_none=True)
    with ctx.engine.begin() as conn:
        repo.insert_job(
            conn,
            job_id=job_id,
            workspace=ctx.workspace,
            # stdlib json: orjson refuses integers beyond 64 bits (a grader config may hold one)
            request=json.dumps(saved, sort_keys=True, ensure_ascii=False, separators=(",", ":")),
            file_name=file_name,
            created_by=ctx.principal.user_id,
            claimed_by=_holder(ctx.settings),
            lease_expires_at=lease_until(ctx.settings),
        )
    if own_file and file is not None:
        file = _adopt(file)
    _LIVE[job_id] = _Live()
    _keep_leases(ctx)
    _pool(ctx.engine.dialect.name).submit(_run, ctx, job_id, request, file, file_name, own_file)
    return _view(_load(ctx, job_id))


class _Tracker:
    """The import's progress callback: remembers progress, persists it (throttled) where the
    backend allows, and raises Cancelled once a cancel was requested."""

    def __init__(self, ctx: Context, job_id: str, live: _Live) -> None:
        self.ctx, self.job_id, self.live = ctx, job_id, live
        self.persist = ctx.engine.dialect.name != "sqlite"
        self.saved_at, self.saved_rows = time.monotonic(), 0

    def __call__(self, progress: ImportProgress) -> None:
        self.live.progress = progress
        if self.live.cancel.is_set():
            raise Cancelled("import cancelled; nothing was stored", {"job": self.job_id})
        due = progress.rows_read - self.saved_rows >= SAVE_EVERY_ROWS
        if not self.persist or not (due or time.monotonic() - self.saved_at >= SAVE_EVERY_S):
            return
        with self.ctx.engine.begin() as conn:
            p = progress
            until = lease_until(self.ctx.settings)
            cancel = repo.save_progress(
                conn, self.job_id, p.rows_read, p.cases_built, p.total, until, p.fraction
            )
        self.saved_at, self.saved_rows = time.monotonic(), progress.rows_read
        if cancel:  # requested from another process
            self.live.cancel.set()
            raise Cancelled("import cancelled; nothing was stored", {"job": self.job_id})


def _run(
    ctx: Context,
    job_id: str,
    request: ImportRequest,
    file: Path | None,
    file_name: str | None,
    own_file: bool,
) -> None:
    live = _LIVE[job_id]
    try:
        with ctx.engine.begin() as conn:
            if live.cancel.is_set():  # cancelled while queued behind a running SQLite import
                repo.request_cancel(conn, job_id)
            if not repo.mark_running(conn, job_id):
                return  # cancelled while queued
        outcome = _attempt(ctx, job_id, request, file, file_name, live)
        if own_file:  # gone before the job reads as ended: a poller never finds it left over
            _discard(file)
        state, result, error = outcome
        counts = live.progress
        progress = (
            (counts.rows_read, counts.cases_built, counts.total, counts.fraction)
            if counts
            else None
        )
        with ctx.engine.begin() as conn:
            repo.finish_job(conn, job_id, state, result=result, error=error, progress=progress)
    except Exception:  # the job row must not stay "running" because of a store failure
        log.exception("import job %s could not record its outcome", job_id)
    finally:
        _LIVE.pop(job_id, None)
        if own_file:
            _discard(file)


def _discard(file: Path | None) -> None:
    """Remove a job's own upload: a file, or the folder a zip or several parts became."""
    if file is None:
        return
    if file.is_dir():
        shutil.rmtree(file, ignore_errors=True)
    else:
        file.unlink(missing_ok=True)


def _attempt(
    ctx: Context,
    job_id: str,
    request: ImportRequest,
    file: Path | None,
    file_name: str | None,
    live: _Live,
) -> tuple[str, str | None, str | None]:
    """Run the import; ``(state, result JSON, error JSON)``."""
    try:
        result = import_benchmark(ctx, request, file, _Tracker(ctx, job_id, live), file_name)
    except Cancelled as exc:
        return "cancelled", None, orjson.dumps(exc.to_dict()).decode()
    except BenchbookError as exc:
        return "failed", None, orjson.dumps(exc.to_dict()).decode()
    except Exception as exc:  # a bug must end the job, not leave it running
        log.exception("import job %s failed unexpectedly", job_id)
        envelope = {"code": "internal", "message": f"unexpected error: {exc!r}", "details": {}}
        return "failed", None, orjson.dumps(envelope).decode()
    return "succeeded", result.model_dump_json(), None


def get_import(ctx: Context, job_id: str) -> ImportJob:
    """One import job of the caller's workspace: state, progress, result or error.

    Raises:
        NotFound: unknown job, or a job of another workspace.
    """
    ctx.require("datasets:read")
    return _view(_load(ctx, job_id))


def list_imports(ctx: Context, limit: int = 50) -> list[ImportJob]:
    """The workspace's import jobs, most recent first (``limit`` 1–200)."""
    ctx.require("datasets:read")
    with ctx.engine.connect() as conn:
        rows = repo.list_jobs(conn, ctx.workspace, max(1, min(limit, MAX_LIST)))
    return [_view(r) for r in rows]


def cancel_import(ctx: Context, job_id: str) -> ImportJob:
    """Ask a job to stop; a queued job is cancelled at once, a running one at its next progress
    report (between row batches), rolling its import back. A finished job is returned unchanged.

    Raises:
        Forbidden: without ``datasets:write``, or another member's job without
            ``datasets:delete`` (admins may cancel any job). NotFound: unknown job.
    """
    ctx.require("datasets:write")
    row = _load(ctx, job_id)
    if row.created_by != ctx.principal.user_id and not ctx.allows("datasets:delete"):
        raise Forbidden("only the job's creator or an admin may cancel it", {"job": job_id})
    if row.state in FINISHED_STATES:
        return _view(row)
    live = _LIVE.get(job_id)
    if live is not None:
        live.cancel.set()
    if live is None or ctx.engine.dialect.name != "sqlite":
        with ctx.engine.begin() as conn:  # SQLite: an import holds the write lock; the
            repo.request_cancel(conn, job_id)  # worker records the cancel itself
    return _view(_load(ctx, job_id))


def reap_orphaned_imports(engine: Engine, settings: Settings) -> list[str]:
    """End the queued or running import jobs whose process is gone (on this host: its pid no
    longer exists; elsewhere, PostgreSQL only: its lease lapsed) as ``failed``, with an error
    saying so. Called by every runs worker's poll; returns the ids it ended."""
    sqlite = engine.dialect.name == "sqlite"
    with engine.connect() as conn:
        held = repo.held_unfinished(conn)
    ended: list[str] = []
    for job_id, holder, expires_at in held:
        if job_id in _LIVE or (sqlite and not on_this_host(holder, settings)):
            continue
        if holder_alive(holder, expires_at, settings):
            continue
        error = {
            "code": "unavailable",
            "message": f"the server running this import ({holder}) stopped before it finished;"
            " nothing was stored — start the import again",
            "details": {"claimed_by": holder},
        }
        with engine.begin() as conn:
            if repo.end_orphan(conn, job_id, holder, orjson.dumps(error).decode()):
                ended.append(job_id)
                log.warning("import job %s: its server %s is gone; marked failed", job_id, holder)
    return ended


def wait_for_import(ctx: Context, job_id: str, timeout_s: float = 600.0) -> ImportJob:
    """Poll a job until it finishes (for the CLI and tests). Raises InvalidInput on timeout."""
    deadline = time.monotonic() + timeout_s
    while True:
        job = get_import(ctx, job_id)
        if job.state in FINISHED_STATES:
            return job
        if time.monotonic() > deadline:
            raise InvalidInput(f"import job {job_id} still {job.state} after {timeout_s:.0f} s")
        time.sleep(0.05)
