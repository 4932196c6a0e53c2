"""The installation's sandbox setting (issue 27 item 1): ``BENCHBOOK_SANDBOX=off`` only on a
single-user install, a missing bubblewrap refused, and nothing of a case left running after a
``kill -9`` of the server executing it — on SQLite and PostgreSQL."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from sqlalchemy import Engine

from benchbook.errors import Conflict, InvalidInput
from benchbook.services import accounts, harnesses, run_execution, runs
from benchbook.services import datasets as ds
from benchbook.services.context import Context, local_admin_context
from benchbook.services.sandboxing import check_sandbox
from benchbook.settings import Settings
from tests.eval.test_runs import arithmetic, start
from tests.procscan import processes_with, wait_gone
from tests.services.test_run_leases import BENCHBOOK, _spawn, _stop, _wait_up


def _command_harness(ctx: Context, script: str) -> str:
    payload = {
        "id": "sh",
        "version": "1.0.0",
        "kind": "command",
        "config": {"argv": ["sh", "-c", script], "timeout_s": 600},
    }
    harnesses.register_harness(ctx, harnesses.parse_harness(payload))
    return "sh@1.0.0"


def _off(engine: Engine, settings: Settings, tmp_path: Path) -> Context:
    tuned = settings.model_copy(update={"sandbox": False, "work_root": tmp_path / "work"})
    return local_admin_context(engine, tuned)


def test_sandbox_off_runs_on_a_single_user_install_and_is_refused_once_there_are_two(
    engine: Engine, settings: Settings, tmp_path: Path
) -> None:
    ctx = _off(engine, settings, tmp_path)
    ds.register_dataset(ctx, arithmetic(n=2))
    harness = _command_harness(ctx, "echo 1")
    assert run_execution.execute_run(ctx, start(ctx, harness).id).status == "finished"
    queued = start(ctx, harness)  # started while the install had one user
    accounts.create_user(ctx, "first@example.org", "First")
    accounts.create_user(ctx, "second@example.org", "Second")
    with pytest.raises(Conflict, match="BENCHBOOK_SANDBOX=off is refused") as refused:
        start(ctx, harness)
    assert refused.value.details["users"] == 2
    with pytest.raises(Conflict, match="only for a single-user install"):
        run_execution.execute_run(ctx, queued.id)
    run = runs.get_run(ctx, queued.id)
    assert run.status == "failed" and "BENCHBOOK_SANDBOX=off is refused" in (run.error or "")


def test_sandbox_off_is_refused_when_the_only_user_is_not_an_installation_admin(
    engine: Engine, settings: Settings, tmp_path: Path
) -> None:
    # A member alone would run code as the server's uid: "off" is for a single-user install
    # whose user is its admin.
    ctx = _off(engine, settings, tmp_path)
    ds.register_dataset(ctx, arithmetic(n=1))
    harness = _command_harness(ctx, "echo 1")
    accounts.create_user(ctx, "member@example.org", "Member")
    with pytest.raises(Conflict, match="BENCHBOOK_SANDBOX=off is refused") as refused:
        start(ctx, harness)
    assert "not an installation admin" in refused.value.message
    assert refused.value.details["non_admin_users"] == 1


def test_sandbox_off_runs_when_the_only_user_is_an_installation_admin(
    engine: Engine, settings: Settings, tmp_path: Path
) -> None:
    ctx = _off(engine, settings, tmp_path)
    ds.register_dataset(ctx, arithmetic(n=1))
    harness = _command_harness(ctx, "echo 1")
    accounts.create_user(ctx, "admin@example.org", "Admin", installation_admin=True)
    assert run_execution.execute_run(ctx, start(ctx, harness).id).status == "finished"


def test_sandbox_off_is_refused_with_a_second_workspace(
    engine: Engine, settings: Settings, tmp_path: Path
) -> None:
    ctx = _off(engine, settings, tmp_path)
    ds.register_dataset(ctx, arithmetic(n=1))
    harness = _command_harness(ctx, "echo 1")
    accounts.create_workspace(ctx, f"team-{os.getpid()}-{time.monotonic_ns()}")
    with pytest.raises(Conflict, match="BENCHBOOK_SANDBOX=off is refused"):
        start(ctx, harness)


def test_a_missing_bubblewrap_refuses_the_run_and_names_the_requirement(
    engine: Engine, settings: Settings, tmp_path: Path
) -> None:
    tuned = settings.model_copy(update={"bwrap": "/no/such/bwrap", "work_root": tmp_path / "w"})
    ctx = local_admin_context(engine, tuned)
    ds.register_dataset(ctx, arithmetic(n=1))
    with pytest.raises(
        Conflict, match=r"needs bubblewrap at /no/such/bwrap.*apt-get install bubblewrap"
    ):
        start(ctx, _command_harness(ctx, "echo 1"))


def test_a_read_only_path_holding_home_refuses_the_run_up_front_naming_the_setting(
    engine: Engine, settings: Settings, tmp_path: Path
) -> None:
    # Bound into no sandbox ever (it holds the database and secret.key): refused when the run
    # starts — and by `benchbook serve`/`worker` (the same check) — not case by case.
    holder = settings.home.resolve().parent
    tuned = settings.model_copy(
        update={"sandbox_ro_paths": [Path("/usr/share"), holder], "work_root": tmp_path / "w"}
    )
    ctx = local_admin_context(engine, tuned)
    ds.register_dataset(ctx, arithmetic(n=1))
    harness = _command_harness(ctx, "echo 1")
    with pytest.raises(Conflict, match="BENCHBOOK_SANDBOX_RO_PATHS") as refused:
        start(ctx, harness)
    assert str(holder) in refused.value.message
    assert refused.value.details == {"setting": "BENCHBOOK_SANDBOX_RO_PATHS", "path": str(holder)}
    with pytest.raises(Conflict, match="BENCHBOOK_SANDBOX_RO_PATHS"):
        check_sandbox(engine, tuned)  # what serve and worker call before starting
    inside = settings.model_copy(update={"sandbox_ro_paths": [settings.home / "mirrors"]})
    with pytest.raises(Conflict, match="BENCHBOOK_SANDBOX_RO_PATHS"):
        check_sandbox(engine, inside)


def test_benchbook_worker_refuses_to_start_with_the_sandbox_off_on_a_team_install(
    ctx: Context, database_url: str, tmp_path: Path
) -> None:
    accounts.create_user(ctx, "first@example.org", "First")
    accounts.create_user(ctx, "second@example.org", "Second")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCHBOOK_")}
    env.update(
        {"DATABASE_URL": database_url, "BENCHBOOK_HOME": str(tmp_path), "BENCHBOOK_SANDBOX": "off"}
    )
    done = subprocess.run(
        [BENCHBOOK, "worker"], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0
    assert "BENCHBOOK_SANDBOX=off is refused" in done.stdout + done.stderr


def test_nothing_of_a_case_survives_a_kill_9_of_the_server_running_it(
    ctx: Context, database_url: str, tmp_path: Path
) -> None:
    detached, waiting = "1000.5151", "1000.5252"
    ds.register_dataset(ctx, arithmetic(n=1))
    harness = _command_harness(ctx, f"setsid -f sleep {detached}; sleep {waiting}")
    server = _spawn("sandbox-kill", database_url, tmp_path / "server", {})
    try:
        _wait_up(server, time.monotonic() + 120)
        start(ctx, harness)
        deadline = time.monotonic() + 90
        while not (processes_with(f"sleep {detached}") and processes_with(f"sleep {waiting}")):
            assert time.monotonic() < deadline, server.log.read_text()
            time.sleep(0.1)
        server.kill()
        assert wait_gone(f"sleep {detached}") == []
        assert wait_gone(f"sleep {waiting}") == []
    finally:
        _stop(server)


def test_a_harness_network_of_none_keeps_the_identity_full_changes_it_and_others_are_refused() -> (
    None
):
    body = {"id": "h", "version": "1.0.0", "kind": "command", "config": {"argv": ["echo"]}}
    before = harnesses.harness_identity(harnesses.parse_harness(body))
    # The hash main computed for this body before the field existed.
    assert before[1] == "82ed7efc4592a1ad70b08d865e3b2578a352bd4bce7e60fcb0b5549eb66e59ee"
    spelled = {**body, "config": {"argv": ["echo"], "network": "none"}}
    assert harnesses.harness_identity(harnesses.parse_harness(spelled)) == before
    full = {**body, "config": {"argv": ["echo"], "network": "full"}}
    assert harnesses.harness_identity(harnesses.parse_harness(full))[1] != before[1]
    assert '"network":"full"' in harnesses.harness_identity(harnesses.parse_harness(full))[0]
    with pytest.raises(InvalidInput) as refused:
        harnesses.parse_harness({**body, "config": {"argv": ["echo"], "network": "lan"}})
    assert "config.network" in str(refused.value.details)
