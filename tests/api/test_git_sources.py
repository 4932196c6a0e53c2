"""Over HTTP and MCP, a member's run on a case whose git URL names a loopback host is 409
naming the case and field, and the loopback git server receives nothing (the finding: the
server's own git requested ``/api/health/info/refs?service=git-upload-pack``). SQLite and
PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from benchbook.app import create_app
from benchbook.services import accounts, harnesses
from benchbook.services.context import Context
from benchbook.services.keys import create_api_key
from benchbook.settings import Settings
from tests.mcp.live import live_server, mcp_http, outcome
from tests.runtime.gitserver import GitServer, make_bare_repo, serve_git

pytestmark = pytest.mark.both_backends


@pytest.fixture
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GitServer]:
    bare, _ = make_bare_repo(tmp_path_factory.mktemp("remote"), {"README.md": "hi\n"})
    with serve_git(bare) as server:
        yield server


def test_a_members_loopback_git_url_is_409_over_http_and_mcp_and_nothing_is_fetched(
    ctx: Context, engine: Engine, settings: Settings, served: GitServer
) -> None:
    body = {"id": "echo", "version": "1.0.0", "kind": "command", "config": {"argv": ["echo", "x"]}}
    harnesses.register_harness(ctx, harnesses.parse_harness(body))
    accounts.create_user(ctx, "mia@example.org", "Mia", "correct-horse-battery")
    accounts.add_member(ctx, "mia@example.org", "member")
    key = create_api_key(ctx, "t", "write", user="mia@example.org").key
    headers = {"Authorization": f"Bearer {key}"}
    env = {"kind": "repo", "source": {"git": served.url, "ref": "main"}}
    case = {"id": "c0", "env": env, "task": "t", "expected": "x"}
    request = {"dataset": "looped", "harness": "echo@1.0.0"}
    with TestClient(create_app(settings, engine)) as http:
        payload = {"id": "looped", "version": "1.0.0", "cases": [case]}
        assert http.post("/api/datasets", json=payload, headers=headers).status_code == 201
        answer = http.post("/api/runs", json=request, headers=headers)
        assert answer.status_code == 409, answer.text
        error = answer.json()
        assert error["code"] == "conflict"
        assert error["details"]["path"] == "cases[0].env.source.git"
        assert (
            "git host 127.0.0.1 is loopback: only public hosts or registered mirrors"
            in (error["message"])
        )
        assert http.get("/api/runs", headers=headers).json() == []
    with live_server(settings, engine) as base, mcp_http(base, key) as mcp:
        code, message = outcome(mcp.call("start_run", {"request": request}))
        assert (code, message) == ("conflict", error["message"])
    assert served.requests == []
