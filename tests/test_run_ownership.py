"""Issue 27: a member could cancel, retry (which deletes the errored results) and re-tag the
runs an admin started. Now a run is changed by its starter or an admin (``runs:manage``):
cancel, resume, retry and its scorecards' tags — including taking a tag such as ``baseline``
away from another user's scorecard. Tested by credential (member key, admin key, a member's
browser session) over HTTP, MCP and the dashboard, on SQLite and PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from benchbook.app import create_app
from benchbook.contracts.run import StartRunRequest
from benchbook.services import accounts, run_execution, runs, scorecards
from benchbook.services import datasets as ds
from benchbook.services.auth import authenticate_api_key
from benchbook.services.context import Context
from benchbook.services.keys import create_api_key
from benchbook.settings import Settings
from tests.eval.test_runs import arithmetic, python_harness
from tests.mcp.live import live_server, mcp_http, outcome

PASSWORD = "member-password"


@dataclass(frozen=True)
class Stage:
    """In workspace ``ws``: the admin's finished run (``admin_run``, its scorecard
    ``admin_card`` tagged ``baseline``) and the member's (``member_run``, ``member_card``);
    keys of each; ``member_email`` logs in with :data:`PASSWORD`."""

    ws: str
    admin_key: str
    member_key: str
    member_email: str
    admin_run: str
    admin_card: str
    member_run: str
    member_card: str


def _as(root: Context, key: str) -> Context:
    return Context(authenticate_api_key(root.engine, key), root.engine, root.settings)


def _finished_run(ctx: Context, harness: str) -> tuple[str, str]:
    run = run_execution.execute_run(
        ctx, runs.start_run(ctx, StartRunRequest(dataset="sums", harness=harness)).id
    )
    assert run.status == "finished" and run.scorecard_id is not None
    return run.id, run.scorecard_id


@pytest.fixture
def stage(ctx: Context) -> Stage:
    tag = uuid.uuid4().hex[:8]
    ws = f"own-{tag}"
    accounts.create_workspace(ctx, ws)
    root = accounts.in_workspace(ctx, ws)
    keys = {}
    for role in ("admin", "member"):
        email = f"{role}-{tag}@example.org"
        accounts.create_user(ctx, email, role.title(), PASSWORD)
        accounts.add_member(root, email, role)  # type: ignore[arg-type]
        scope = "admin" if role == "admin" else "write"
        keys[role] = create_api_key(root, "own", scope, user=email).key  # type: ignore[arg-type]
    ds.register_dataset(root, arithmetic("sums", n=2))
    harness = python_harness(root, "add")
    admin_run, admin_card = _finished_run(_as(root, keys["admin"]), harness)
    member_run, member_card = _finished_run(_as(root, keys["member"]), harness)
    scorecards.set_scorecard_tags(_as(root, keys["admin"]), admin_card, ["baseline"])
    return Stage(
        ws, keys["admin"], keys["member"], f"member-{tag}@example.org",
        admin_run, admin_card, member_run, member_card,
    )  # fmt: skip


@pytest.fixture
def http(engine: Engine, settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings, engine=engine)) as client:
        yield client


def _http(client: TestClient, key: str, method: str, path: str, body: object = None) -> str:
    answer = client.request(method, path, json=body, headers={"Authorization": f"Bearer {key}"})
    return "ok" if answer.status_code < 300 else answer.json()["code"]


def _state(ctx: Context, stage: Stage) -> tuple[str, list[str], list[str]]:
    root = accounts.in_workspace(ctx, stage.ws)
    return (
        runs.get_run(root, stage.admin_run).status,
        scorecards.get_scorecard(root, stage.admin_card).tags,
        scorecards.get_scorecard(root, stage.member_card).tags,
    )


@pytest.mark.both_backends
def test_a_member_cannot_cancel_retry_or_retag_an_admins_run_over_http(
    ctx: Context, stage: Stage, http: TestClient
) -> None:
    member, admin = stage.member_key, stage.admin_key
    for action in ("cancel", "retry", "resume"):
        assert _http(http, member, "POST", f"/api/runs/{stage.admin_run}/{action}") == "forbidden"
    tags = {"tags": ["prod"]}
    assert _http(http, member, "PUT", f"/api/scorecards/{stage.admin_card}/tags", tags) == (
        "forbidden"
    )
    steal = {"tags": ["baseline"]}  # moving the admin's baseline onto the member's scorecard
    assert _http(http, member, "PUT", f"/api/scorecards/{stage.member_card}/tags", steal) == (
        "forbidden"
    )
    assert _state(ctx, stage) == ("finished", ["baseline"], [])
    # their own run and tags free of others' are theirs to change
    assert _http(http, member, "PUT", f"/api/scorecards/{stage.member_card}/tags", tags) == "ok"
    # an admin may act on anyone's run
    assert _http(http, admin, "PUT", f"/api/scorecards/{stage.member_card}/tags", steal) == "ok"
    assert _http(http, admin, "POST", f"/api/runs/{stage.admin_run}/cancel") == "ok"
    assert _http(http, member, "POST", f"/api/runs/{stage.member_run}/retry") == "ok"
    assert _http(http, member, "POST", f"/api/runs/{stage.member_run}/cancel") == "ok"


def test_a_member_cannot_cancel_retry_or_retag_an_admins_run_over_mcp(
    ctx: Context, stage: Stage, engine: Engine, settings: Settings
) -> None:
    with live_server(settings, engine) as url, mcp_http(url, stage.member_key) as mcp:
        for tool in ("cancel_run", "retry_run", "resume_run"):
            code, message = outcome(mcp.call(tool, {"run_id": stage.admin_run}))
            assert code == "forbidden" and "only they or an admin" in message
        card = {"scorecard_id": stage.admin_card, "tags": ["prod"]}
        assert outcome(mcp.call("set_scorecard_tags", card))[0] == "forbidden"
        steal = {"scorecard_id": stage.member_card, "tags": ["baseline"]}
        assert outcome(mcp.call("set_scorecard_tags", steal))[0] == "forbidden"
        assert outcome(mcp.call("cancel_run", {"run_id": stage.member_run}))[0] == "ok"
    assert _state(ctx, stage) == ("finished", ["baseline"], [])


def test_a_members_dashboard_session_cannot_retag_an_admins_scorecard(
    ctx: Context, stage: Stage, http: TestClient
) -> None:
    login = http.post("/api/login", json={"email": stage.member_email, "password": PASSWORD})
    assert login.status_code == 200
    csrf = login.json()["csrf_token"]
    theirs, mine = http.get(f"/runs/{stage.admin_run}"), http.get(f"/runs/{stage.member_run}")
    assert f"/scorecards/{stage.admin_card}/tags" not in theirs.text  # no form to refuse
    assert f"/scorecards/{stage.member_card}/tags" in mine.text
    for card, tags in ((stage.admin_card, "prod"), (stage.member_card, "baseline")):
        answer = http.post(
            f"/scorecards/{card}/tags", data={"tags": tags, "csrf": csrf}, follow_redirects=False
        )
        assert answer.status_code == 403
    assert _state(ctx, stage) == ("finished", ["baseline"], [])
