"""Who may have a command harness's ``argv`` files bound into the sandbox (a security finding:
a workspace admin registered ``["sh", "-c", "…head…", "x", "/root/.bashrc", …]`` and read the
server's files). Only a harness an installation admin registered (or ``_shared``) has them
bound; a workspace admin's is refused when registered and when a run starts, naming
``config.argv[i]``, and a run whose harness author lost the right binds nothing. SQLite and
PostgreSQL, real bubblewrap."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update

from benchbook.contracts.run import StartRunRequest
from benchbook.errors import Forbidden, NotFound
from benchbook.services import accounts, harnesses, registered, run_execution, run_results, runs
from benchbook.services import datasets as ds
from benchbook.services.context import Context, Principal
from benchbook.store.tables import users
from tests.services.test_code_rules import dataset

SECRET = "server-private-7a3c"
READER = 'for f in "$@"; do head -c 200 "$f"; done'


def person(ctx: Context, name: str, role: str, installation_admin: bool = False) -> Context:
    """A real user acting in ``ctx``'s workspace with ``role``."""
    user = accounts.create_user(
        ctx, f"{name}@example.org", name.title(), installation_admin=installation_admin
    )
    accounts.add_member(ctx, user.email, role)  # type: ignore[arg-type]
    principal = Principal(
        user_id=user.id,
        display_name=name,
        workspace=ctx.workspace,
        role=role,  # type: ignore[arg-type]
        can_publish_shared=installation_admin,
    )
    return Context(principal=principal, engine=ctx.engine, settings=ctx.settings)


@pytest.fixture
def server_file(tmp_path: Path) -> Path:
    path = tmp_path / "server" / ".bashrc"
    path.parent.mkdir()
    path.write_text(SECRET)
    return path


def reader(server_file: Path, version: str = "1.0.0") -> Any:
    argv = ["sh", "-c", READER, "x", "/etc/passwd", str(server_file)]
    body = {"id": "read6", "version": version, "kind": "command", "config": {"argv": argv}}
    return harnesses.parse_harness(body)


def start(ctx: Context) -> Any:
    request = {"dataset": "one", "harness": "read6@1.0.0"}
    return runs.start_run(ctx, StartRunRequest.model_validate(request))


@pytest.fixture
def one(ctx: Context) -> None:
    ds.register_dataset(
        ctx, dataset("one", {"id": "c0", "env": {"kind": "prompt"}, "task": "t", "expected": "x"})
    )


def test_a_workspace_admin_may_not_register_a_harness_naming_a_server_file(
    ctx: Context, server_file: Path
) -> None:
    wanda = person(ctx, "wanda", "admin")
    with pytest.raises(Forbidden) as refused:
        harnesses.register_harness(wanda, reader(server_file))
    message = refused.value.message
    assert message.startswith(f"config.argv[5]: {server_file} is a file outside"), message
    assert "BENCHBOOK_SANDBOX_RO_PATHS" in message and "installation admin" in message
    assert refused.value.details == {"path": "config.argv[5]", "file": str(server_file)}
    with pytest.raises(NotFound):
        harnesses.get_harness(ctx, "read6")  # nothing stored


def test_a_workspace_admin_may_name_files_every_sandbox_shows(ctx: Context) -> None:
    wanda = person(ctx, "wanda", "admin")
    argv = ["sh", "-c", READER, "x", "/bin/sh", "/etc/passwd", "/no/such/file"]
    body = {"id": "sys", "version": "1.0.0", "kind": "command", "config": {"argv": argv}}
    assert harnesses.register_harness(wanda, harnesses.parse_harness(body)).created


def test_an_installation_admins_harness_has_its_files_bound_for_anyone_who_runs_it(
    ctx: Context, server_file: Path, one: None
) -> None:
    ian = person(ctx, "ian", "admin", installation_admin=True)
    harnesses.register_harness(ian, reader(server_file))
    mia = person(ctx, "mia", "member")
    run = run_execution.execute_run(mia, start(mia).id)
    (result,) = run_results.list_run_results(mia, run.id)
    assert result.status == "ok", result.error
    assert result.answer is not None and result.answer.endswith(SECRET)


def test_a_harness_a_workspace_admin_stored_before_the_rule_is_refused_when_a_run_starts(
    ctx: Context, server_file: Path, one: None
) -> None:
    wanda = person(ctx, "wanda", "admin")
    registered.store_version(wanda, harnesses.HARNESS, reader(server_file), wanda.workspace)
    for who in (wanda, ctx):  # an installation admin starting it changes nothing: who wrote it
        with pytest.raises(Forbidden) as refused:
            start(who)
        assert refused.value.message.startswith("harness read6@1.0.0: harness.config.argv[5]:")
        assert refused.value.details["path"] == "harness.config.argv[5]"
    assert runs.list_runs(ctx) == [], "a refused run is not stored"


def test_a_queued_run_whose_harness_author_lost_installation_admin_binds_nothing(
    ctx: Context, server_file: Path, one: None
) -> None:
    ian = person(ctx, "ian", "admin", installation_admin=True)
    harnesses.register_harness(ian, reader(server_file))
    run = start(ian)
    with ctx.engine.begin() as conn:
        conn.execute(
            update(users)
            .where(users.c.id == ian.principal.user_id)
            .values(installation_admin=False)
        )
    done = run_execution.execute_run(ctx, run.id)
    (result,) = run_results.list_run_results(ctx, done.id)
    assert result.status == "error" and result.error is not None
    assert result.error.startswith("sandbox: config.argv[5]:"), result.error
    assert SECRET not in (result.answer or "")
