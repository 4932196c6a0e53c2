"""Several servers on one database (issue 13 item 2): runs claimed with a lease, taken over when
it lapses, each (case, sample) stored once; import jobs visible from, and ended by, any replica.

The two-server tests start two real ``benchbook serve`` processes on one PostgreSQL database,
each with its own home and its own worker host name (``BENCHBOOK_WORKER_HOST``: as on two
machines, so a takeover waits for the lease instead of seeing the dead pid), with a 2 s lease
renewed every 0.5 s. The run's harness appends ``pid case sample`` to a shared log, which says
which process ran what. The SQLite single-worker rule and the lease fencing are checked at the
service level.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine, func, select

from benchbook.contracts.run import CaseResult, StartRunRequest
from benchbook.eval.executors.local import FinishedItem
from benchbook.services import accounts, keys, run_execution, run_worker, runs
from benchbook.services import datasets as ds
from benchbook.services.context import Context
from benchbook.services.leases import local_host, pid_alive
from benchbook.settings import Settings
from benchbook.store import leases as lease_repo
from benchbook.store import run_leases
from benchbook.store import runs as run_repo
from benchbook.store.tables import case_results, utcnow
from tests.eval.test_runs import arithmetic, python_harness
from tests.hfserver.catalog import GSM8K_ID
from tests.hfserver.server import HfServer
from tests.services.test_jobs import held_page, stored

ROOT = Path(__file__).resolve().parents[2]
BENCHBOOK = str(Path(sys.executable).parent / "benchbook")
LEASE = {"BENCHBOOK_RUN_LEASE_S": "2", "BENCHBOOK_RUN_LEASE_RENEW_S": "0.5"}
CASES = 40


@dataclass
class Replica:
    """One ``benchbook serve`` process."""

    name: str
    url: str
    proc: subprocess.Popen[bytes]
    log: Path

    def kill(self) -> None:
        """``kill -9``, then reap it (a zombie's pid would still look alive)."""
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _spawn(name: str, database_url: str, home: Path, env_extra: dict[str, str]) -> Replica:
    """Start ``benchbook serve`` on a free port as worker host ``name`` (not yet waited for)."""
    home.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCHBOOK_")}
    env.pop("DATABASE_URL", None)
    env.update(
        {
            "DATABASE_URL": database_url,
            "BENCHBOOK_HOME": str(home),
            "BENCHBOOK_WORKER_HOST": name,
            "BENCHBOOK_WORK_ROOT": str(home / "work"),
            "PYTHONPATH": os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]),
            **LEASE,
            **env_extra,
        }
    )
    log = home / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [BENCHBOOK, "serve", "--port", str(port)], env=env, stdout=out, stderr=out
        )
    return Replica(name, f"http://127.0.0.1:{port}", proc, log)


def _wait_up(r: Replica, deadline: float) -> None:
    while True:
        try:
            if httpx.get(r.url + "/api/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if r.proc.poll() is not None or time.monotonic() > deadline:
            r.proc.kill()
            pytest.fail(f"replica {r.name} did not start:\n{r.log.read_text()}")
        time.sleep(0.1)


def _stop(r: Replica) -> None:
    if r.proc.poll() is None:
        r.proc.terminate()
        try:
            r.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            r.proc.kill()
            r.proc.wait()


@contextmanager
def two_replicas(
    database_url: str, tmp_path: Path, env_extra: dict[str, str]
) -> Iterator[dict[str, Replica]]:
    """Replicas ``replica-a`` and ``replica-b`` sharing one database (and one secret key),
    started side by side; stopped (or already killed) after."""
    shared = {"BENCHBOOK_SECRET_KEY": "replicas-" + uuid.uuid4().hex, **env_extra}
    found: dict[str, Replica] = {}
    try:
        for name in ("replica-a", "replica-b"):
            found[name] = _spawn(name, database_url, tmp_path / name, shared)
        deadline = time.monotonic() + 120  # a loaded 2-core machine
        for r in found.values():
            _wait_up(r, deadline)
        yield found
    finally:
        for r in found.values():
            _stop(r)


def until(check: Callable[[], Any], what: str, timeout_s: float = 60.0) -> Any:
    """Poll ``check`` until it returns something truthy (a failure names ``what``)."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def ran(log: Path) -> list[tuple[int, str, int]]:
    """``(pid, case_id, sample)`` of every harness call so far, in order."""
    if not log.exists():
        return []
    out = []
    for line in log.read_text().splitlines():
        pid, case_id, sample = line.split()
        out.append((int(pid), case_id, int(sample)))
    return out


def stored_keys(engine: Engine, run_id: str) -> Counter[tuple[str, int]]:
    """How many result rows each (case, sample) of the run has."""
    c = case_results.c
    with engine.connect() as conn:
        rows = conn.execute(
            select(c.case_id, c.sample, func.count())
            .where(c.run_id == run_id)
            .group_by(c.case_id, c.sample)
        )
        return Counter({(case_id, sample): n for case_id, sample, n in rows})


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_two_servers_run_a_queued_run_once_and_the_survivor_finishes_it_after_kill_9(
    ctx: Context, engine: Engine, database_url: str, tmp_path: Path
) -> None:
    harness_log = tmp_path / "harness.log"
    ds.register_dataset(ctx, arithmetic(n=CASES))
    harness = python_harness(ctx, "logged")
    env = {"BENCHBOOK_TEST_HARNESS_LOG": str(harness_log)}
    t0 = time.monotonic()
    with two_replicas(database_url, tmp_path, env) as replicas:
        print(f"two replicas up in {time.monotonic() - t0:.1f} s")
        request = StartRunRequest.model_validate(
            {"dataset": "sums", "harness": harness, "settings": {"concurrency": 2}}
        )
        run = runs.start_run(ctx, request)
        assert run.status == "queued"

        def holder() -> str | None:
            with engine.connect() as conn:
                row = run_repo.get_run(conn, run.id)
            return row.claimed_by if row is not None and row.status == "running" else None

        first_holder = until(holder, "a replica to claim the run")
        victim = replicas[first_holder.split(":")[0]]
        survivor = next(r for r in replicas.values() if r is not victim)
        until(lambda: runs.get_run(ctx, run.id).counts.done >= 6, "6 stored results")
        print(f"killing {victim.name} at {time.monotonic() - t0:.1f} s")
        victim.kill()
        stored_at_kill = set(stored_keys(engine, run.id))
        ran_at_kill = ran(harness_log)
        assert 6 <= len(stored_at_kill) < CASES

        done = until(
            lambda: (r := runs.get_run(ctx, run.id)).status == "finished" and r,
            "the survivor to finish the run",
        )
        print(f"finished by {survivor.name} at {time.monotonic() - t0:.1f} s")
        with engine.connect() as conn:
            row = run_repo.get_run(conn, run.id)
        assert row is not None and row.claimed_by is None and row.lease_expires_at is None

    # Ran once: until the kill, only the first holder's process ran cases.
    assert {pid for pid, _, _ in ran_at_kill} == {victim.proc.pid}
    # Each case counted once: one result row per (case, sample), and the scorecard's n.
    rows = stored_keys(engine, run.id)
    assert set(rows) == {(f"c{i}", 0) for i in range(CASES)}
    assert set(rows.values()) == {1}
    assert (done.counts.total, done.counts.done, done.counts.passed) == (CASES, CASES, CASES)
    assert done.scorecard_id is not None
    # Resume semantics: the survivor ran exactly what was not stored at the kill.
    calls = ran(harness_log)
    by_survivor = {(c, s) for pid, c, s in calls if pid == survivor.proc.pid}
    assert by_survivor == {(f"c{i}", 0) for i in range(CASES)} - stored_at_kill
    assert {pid for pid, _, _ in calls} == {victim.proc.pid, survivor.proc.pid}
    twice = [k for k, n in Counter((c, s) for _, c, s in calls).items() if n > 1]
    assert len(twice) <= 2 * 2  # only what the victim had in flight (or finished, unwritten)
    assert "taken over" in survivor.log.read_text()


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_an_import_runs_on_one_replica_its_progress_shows_on_the_other_and_its_death_ends_it(
    ctx: Context, engine: Engine, database_url: str, tmp_path: Path, hf_server: HfServer
) -> None:
    accounts.create_user(ctx, "ada@example.org", "Ada", "correct horse battery")
    accounts.add_member(ctx, "ada@example.org", "admin")
    key = keys.create_api_key(ctx, "replicas", user="ada@example.org").key
    auth = {"Authorization": f"Bearer {key}"}
    env = {"HF_ENDPOINT": hf_server.url, "BENCHBOOK_HF_VIEWER_ENDPOINT": hf_server.viewer_url}
    request = {
        "spec": {
            "id": "hf-bench",
            "source": {
                "kind": "huggingface",
                "dataset": GSM8K_ID,
                "config": "main",
                "split": "test",
            },
            "mapping": {"task_field": "question", "answer_field": "answer"},
        }
    }
    with two_replicas(database_url, tmp_path, env) as replicas:
        a, b = replicas["replica-a"], replicas["replica-b"]
        with held_page(hf_server, 1100) as (reached, _release):
            started = httpx.post(a.url + "/api/imports", json=request, headers=auth, timeout=30)
            assert started.status_code == 202, started.text
            job_id = started.json()["id"]
            assert reached.wait(30), "the import never asked for the page at offset 1100"

            def progress_on_b() -> dict[str, Any] | None:
                got = httpx.get(f"{b.url}/api/imports/{job_id}", headers=auth, timeout=10)
                assert got.status_code == 200, got.text
                job: dict[str, Any] = got.json()
                return job if job["progress"]["rows_read"] >= 1000 else None

            seen = until(progress_on_b, "replica-b to show the import's progress")
            assert seen["state"] == "running" and seen["progress"]["rows_read"] < 1319  # GSM8K test
            a.kill()  # the import's process dies mid-transaction: nothing was stored

            def ended_on_b() -> dict[str, Any] | None:
                got = httpx.get(f"{b.url}/api/imports/{job_id}", headers=auth, timeout=10)
                job: dict[str, Any] = got.json()
                return job if job["state"] != "running" else None

            ended = until(ended_on_b, "replica-b's worker to end the orphaned import")
        assert ended["state"] == "failed" and ended["error"]["code"] == "unavailable"
        assert "replica-a" in ended["error"]["message"]
    assert stored(ctx) == []  # the dead replica's import transaction left nothing


def _queued(ctx: Context) -> str:
    request = StartRunRequest(dataset="sums", harness="add@1.0.0")
    return runs.start_run(ctx, request).id


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_sqlite_allows_one_runs_worker_the_second_waits_until_the_first_stops(
    ctx: Context,
) -> None:
    ds.register_dataset(ctx, arithmetic(n=2))
    python_harness(ctx, "add")
    first = run_worker.RunWorker(ctx.engine, ctx.settings)
    second = run_worker.RunWorker(ctx.engine, ctx.settings)
    one = _queued(ctx)
    assert first.poll_once() is True and runs.get_run(ctx, one).status == "finished"
    two = _queued(ctx)
    assert second.poll_once() is False and second.standby
    assert runs.get_run(ctx, two).status == "queued"
    first.stop()  # gives the worker lease up
    assert second.poll_once() is True and not second.standby
    assert runs.get_run(ctx, two).status == "finished"
    second.stop()


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_sqlite_hands_the_worker_lease_on_when_its_holder_process_is_gone(ctx: Context) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    assert not pid_alive(str(gone.pid))
    ds.register_dataset(ctx, arithmetic(n=2))
    python_harness(ctx, "add")
    dead = f"{local_host(ctx.settings)}:{gone.pid}:0dead0"
    with ctx.engine.begin() as conn:  # left by a killed `benchbook worker`, lease still fresh
        lease_repo.take_lease(conn, "runs", dead, utcnow() + timedelta(hours=1), None)
    worker = run_worker.RunWorker(ctx.engine, ctx.settings)
    run_id = _queued(ctx)
    assert worker.poll_once() is True and runs.get_run(ctx, run_id).status == "finished"
    worker.stop()


def test_on_postgresql_any_number_of_workers_poll_and_a_locked_run_is_skipped_not_waited_for(
    ctx: Context, backend: str
) -> None:
    if backend != "postgresql":
        pytest.skip("row locks (FOR UPDATE SKIP LOCKED) are PostgreSQL's")
    ds.register_dataset(ctx, arithmetic(n=2))
    python_harness(ctx, "add")
    run_id = _queued(ctx)
    worker = run_worker.RunWorker(ctx.engine, ctx.settings)
    other = run_worker.RunWorker(ctx.engine, ctx.settings)
    with ctx.engine.begin() as conn:  # another worker is claiming it right now
        assert [r.id for r in run_leases.lock_claimable(conn, utcnow())] == [run_id]
        assert worker.poll_once() is False  # skipped at once, not blocked
    assert other.poll_once() is True and not other.standby
    assert runs.get_run(ctx, run_id).status == "finished"


def test_a_holder_that_lost_its_lease_writes_nothing_more(ctx: Context) -> None:
    ds.register_dataset(ctx, arithmetic(n=2))
    python_harness(ctx, "add")
    run_id = _queued(ctx)
    with ctx.engine.connect() as conn:
        row = run_repo.get_run(conn, run_id)
    assert row is not None
    old, new = "elsewhere:1:aaaaaa", "elsewhere:2:bbbbbb"
    now = utcnow()
    with ctx.engine.begin() as conn:
        assert run_leases.take_run(conn, row, old, now, now - timedelta(seconds=1))  # lapsed
    with ctx.engine.connect() as conn:
        held = run_repo.get_run(conn, run_id)
    assert held is not None
    sink = run_execution.StoreSink(ctx, held, old, None)
    with ctx.engine.begin() as conn:  # another server takes the lapsed run over
        assert run_leases.take_run(conn, held, new, now, now + timedelta(seconds=30))
    item = FinishedItem(0, CaseResult(case_id="c0", sample=0, status="ok", answer="1"))
    sink.write([item])
    assert stored_keys(ctx.engine, run_id) == Counter()
    assert sink.cancelled() and sink.lost
    assert sink.renew() is False
    with ctx.engine.begin() as conn:
        assert run_leases.renew_lease(conn, run_id, new, now, now) is False  # no cancel asked


def test_lease_settings_default_to_30_s_renewed_every_10_s_and_renewal_must_be_shorter() -> None:
    defaults = Settings()
    assert (defaults.run_lease_s, defaults.run_lease_renew_s) == (30.0, 10.0)
    with pytest.raises(ValueError, match="BENCHBOOK_RUN_LEASE_RENEW_S"):
        Settings(run_lease_s=5, run_lease_renew_s=5)
    with pytest.raises(ValueError, match="worker_host"):
        Settings(worker_host="a:b")


@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
def test_servers_started_together_on_an_empty_database_migrate_one_after_the_other(
    empty_database_url: str, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCHBOOK_")}
    env.update({"DATABASE_URL": empty_database_url, "BENCHBOOK_HOME": str(tmp_path)})
    procs = [
        subprocess.Popen([BENCHBOOK, "migrate"], env=env, stderr=subprocess.PIPE) for _ in range(2)
    ]
    errors = [p.communicate(timeout=120)[1].decode() for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errors


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_benchbook_worker_executes_queued_runs_and_stops_on_sigterm_giving_its_lease_up(
    ctx: Context, database_url: str, tmp_path: Path
) -> None:
    ds.register_dataset(ctx, arithmetic(n=3))
    python_harness(ctx, "add")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCHBOOK_")}
    env.update(
        {
            "DATABASE_URL": database_url,
            "BENCHBOOK_HOME": str(tmp_path / "worker"),
            "PYTHONPATH": os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]),
        }
    )
    proc = subprocess.Popen(
        [BENCHBOOK, "worker", "--poll-s", "0.1"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        run_id = _queued(ctx)
        until(lambda: runs.get_run(ctx, run_id).status == "finished", "the worker to run it")
        with ctx.engine.connect() as conn:
            lease = lease_repo.get_lease(conn, "runs")
        assert lease is not None and lease.holder.split(":")[1] == str(proc.pid)
        proc.send_signal(signal.SIGTERM)
        out = proc.communicate(timeout=60)[0].decode()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, out
    assert out.startswith(f"runs worker {lease.holder} on sqlite:///"), out
    with ctx.engine.connect() as conn:
        assert lease_repo.get_lease(conn, "runs") is None
