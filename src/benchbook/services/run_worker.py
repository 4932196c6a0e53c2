"""The runs worker (SPEC H.4): the thread inside ``benchbook serve`` and ``benchbook worker``
that claims queued runs, and runs whose holder died, and executes them one at a time.

Its duties besides executing: claiming (``SELECT … FOR UPDATE SKIP LOCKED`` and a
compare-and-set update, so two servers on one PostgreSQL never both take a run), reaping import
jobs whose server died, and on SQLite holding the database's one worker lease (renewed by a
:class:`~benchbook.services.leases.LeaseKeeper`).
"""

from __future__ import annotations

import contextlib
import logging
import threading

from sqlalchemy import Connection, Engine

from benchbook.errors import Conflict
from benchbook.services.context import Context, Principal
from benchbook.services.jobs import reap_orphaned_imports
from benchbook.services.leases import (
    LeaseKeeper,
    holder_alive,
    lease_until,
    local_host,
    on_this_host,
    worker_id,
)
from benchbook.services.run_execution import execute_run, run_holder_alive
from benchbook.settings import Settings
from benchbook.store import leases as lease_repo
from benchbook.store import run_leases
from benchbook.store import runs as repo
from benchbook.store.engine import try_write
from benchbook.store.tables import utcnow

log = logging.getLogger(__name__)

#: The worker lease an SQLite database allows one holder of.
SQLITE_WORKER_LEASE = "runs"


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

    Started by ``benchbook serve`` (unless ``BENCHBOOK_RUN_WORKER=false``) and by
    ``benchbook worker``. Each poll also ends import jobs whose server died
    (:func:`~benchbook.services.jobs.reap_orphaned_imports`). On SQLite a worker first takes
    the database's one ``runs`` worker lease and keeps it while its process lives; a second
    worker on the same SQLite file waits (``standby``) until that lease is released or its
    holder is gone. ``stop()`` stops picking up runs and releases that lease; a run in progress
    keeps its own lease until the process exits and is then taken over like any orphan.
    """

    def __init__(self, engine: Engine, settings: Settings, poll_s: float = 1.0) -> None:
        super().__init__(name="benchbook-run-worker", daemon=True)
        self.engine, self.settings, self.poll_s = engine, settings, poll_s
        self.sqlite = engine.dialect.name == "sqlite"
        self.holder = worker_id(settings)
        self.standby = False
        self._stop_event = threading.Event()
        self._keeper: LeaseKeeper | None = None

    def stop(self) -> None:
        """Stop picking up runs (and, on SQLite, give the worker lease up)."""
        self._stop_event.set()
        if self._keeper is not None:
            self._keeper.stop()
            self._keeper = None
        if self.sqlite:
            with contextlib.suppress(Exception), self.engine.begin() as conn:
                lease_repo.release_lease(conn, SQLITE_WORKER_LEASE, self.holder)

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
        if self.sqlite and not self._hold_sqlite_lease():
            return False
        with contextlib.suppress(Exception):
            reap_orphaned_imports(self.engine, self.settings)
        claimed = self._claim_next()
        if claimed is None:
            return False
        row, worker = claimed
        ctx = run_context(self.engine, self.settings, row)
        try:
            execute_run(ctx, row.id, worker=worker)
        except Conflict:
            return False
        except Exception:
            log.exception("run %s failed in the worker", row.id)
        return True

    def _claim_next(self) -> tuple[repo.RunRow, str] | None:
        """Take the oldest claimable run for a new holder id (one transaction: candidates
        read ``FOR UPDATE SKIP LOCKED``, then a compare-and-set update)."""
        now = utcnow()
        host = local_host(self.settings) + ":"
        with self.engine.begin() as conn:
            for row in run_leases.lock_claimable(conn, now, host_prefix=host):
                lapsed = row.lease_expires_at is None or row.lease_expires_at < now
                if row.status == "running" and row.claimed_by:
                    if on_this_host(row.claimed_by, self.settings):
                        if run_holder_alive(row, self.settings):
                            continue  # a live process of this host: never before it exits
                    elif not lapsed:
                        continue
                worker = worker_id(self.settings)
                if run_leases.take_run(conn, row, worker, now, lease_until(self.settings, now)):
                    if row.status == "running":
                        log.warning("run %s taken over from %s", row.id, row.claimed_by)
                    taken = repo.get_run(conn, row.id)
                    assert taken is not None
                    return taken, worker
        return None

    def _hold_sqlite_lease(self) -> bool:
        """Take or keep SQLite's one worker lease; False while another live worker has it.
        While held, its keeper renews it (without waiting on a busy writer) and a poll writes
        nothing."""
        keeper = self._keeper
        if keeper is not None and keeper.is_alive():
            return True
        now = utcnow()
        with self.engine.begin() as conn:
            seen = lease_repo.get_lease(conn, SQLITE_WORKER_LEASE)
            if seen is not None and seen.holder == self.holder:
                held = lease_repo.renew_lease(
                    conn, SQLITE_WORKER_LEASE, self.holder, lease_until(self.settings, now)
                )
            elif seen is not None and holder_alive(seen.holder, seen.expires_at, self.settings):
                held = False
            else:
                until = lease_until(self.settings, now)
                held = lease_repo.take_lease(conn, SQLITE_WORKER_LEASE, self.holder, until, seen)
        if not held and not self.standby:
            log.warning(
                "another runs worker (%s) is active on this SQLite database; this one waits"
                " (SQLite allows one; use PostgreSQL for several)",
                seen.holder if seen else "?",
            )
        self.standby = not held
        if held and not self._stop_event.is_set():
            every = self.settings.run_lease_renew_s
            self._keeper = LeaseKeeper("sqlite-worker", self._renew_sqlite_lease, every)
            self._keeper.start()
        return held

    def _renew_sqlite_lease(self) -> bool:
        """Renew the worker lease; a busy writer (a long import) skips this renewal — the
        lease may lapse then, but a worker of this host waits for this process anyway."""
        held = [True]

        def renew(conn: Connection) -> None:
            until = lease_until(self.settings)
            held[0] = lease_repo.renew_lease(conn, SQLITE_WORKER_LEASE, self.holder, until)

        try_write(self.engine, renew)
        return held[0]
