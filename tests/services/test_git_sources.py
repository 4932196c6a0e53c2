"""A repo case's git URL passes the server's git egress rules when the run starts (409 naming
the case and field when the URL alone decides it) and again before any clone or fetch (the
finding: a member's ``"git": "http://127.0.0.1:8732/api/health"`` made the server's own git
request ``/api/health/info/refs``). A loopback git server proves nothing is fetched. SQLite and
PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from benchbook.contracts.run import StartRunRequest
from benchbook.errors import Conflict, Forbidden
from benchbook.services import datasets as ds
from benchbook.services import run_execution, runs
from benchbook.services.context import Context
from tests.runtime.gitserver import GitServer, make_bare_repo, serve_git
from tests.services.test_code_rules import dataset, echo_harness, member, repo_case

RULE = "is loopback: only public hosts or registered mirrors"


@pytest.fixture
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GitServer]:
    bare, _ = make_bare_repo(tmp_path_factory.mktemp("remote"), {"README.md": "hi\n"})
    with serve_git(bare) as server:
        yield server


def git_case(url: str) -> dict[str, object]:
    return repo_case(env={"source": {"git": url, "ref": "main"}})


def start(ctx: Context, dataset_id: str) -> object:
    request = StartRunRequest(dataset=dataset_id, harness="echo@1.0.0")
    return runs.start_run(ctx, request)


def test_a_members_loopback_git_url_is_409_naming_the_case_and_nothing_is_fetched(
    ctx: Context, served: GitServer
) -> None:
    echo_harness(ctx)
    mia = member(ctx)
    ds.register_dataset(mia, dataset("looped", git_case(served.url)))
    ds.register_dataset(mia, dataset("health", git_case("http://127.0.0.1:8732/api/health")))
    for who in (mia, ctx):  # an admin's run on the member's data too
        for dataset_id in ("looped", "health"):
            with pytest.raises(Conflict) as caught:
                start(who, dataset_id)
            assert caught.value.details["path"] == "cases[0].env.source.git"
            assert caught.value.message.startswith("cases[0].env.source.git: case 'c0': http://")
            assert f"git host 127.0.0.1 {RULE}" in caught.value.message
    assert runs.list_runs(ctx) == [] and served.requests == []


def test_a_listed_name_that_resolves_to_loopback_is_a_case_error_and_nothing_is_fetched(
    ctx: Context, served: GitServer
) -> None:
    echo_harness(ctx)
    port = served.url.split(":")[2].split("/")[0]
    listed = ctx.settings.model_copy(update={"git_allowed_hosts": [f"localhost:{port}"]})
    mia = member(Context(principal=ctx.principal, engine=ctx.engine, settings=listed))
    ds.register_dataset(
        mia, dataset("named", git_case(served.url.replace("127.0.0.1", "localhost")))
    )
    run = run_execution.execute_run(mia, start(mia, "named").id)  # type: ignore[attr-defined]
    assert run.counts.error == 1
    assert "git host localhost resolves to 127.0.0.1 (loopback)" in run.top_errors[0].error
    assert served.requests == []


def test_a_members_local_path_source_is_refused(ctx: Context) -> None:
    echo_harness(ctx)
    mia = member(ctx)
    ds.register_dataset(mia, dataset("local", repo_case(env={"source": {"path": "/work"}})))
    with pytest.raises(Forbidden) as caught:
        start(mia, "local")
    assert caught.value.details["path"] == "cases[0].env.source.path"
