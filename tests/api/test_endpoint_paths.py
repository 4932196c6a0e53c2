"""A judge's ``base_url`` may not walk out of its registered endpoint with ``..`` (issue:
with ``http://127.0.0.1:8733/v1`` registered and a secret bound to it, a member's judge at
``…/v1/../internal/admin`` got 202 and the listener received ``GET /internal/admin/models`` with
the key). Over HTTP and MCP the run is 400 naming the field, and a local listener proves
nothing was requested. SQLite and PostgreSQL."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from benchbook.app import create_app
from benchbook.services import accounts, endpoints, harnesses
from benchbook.services.context import Context
from benchbook.services.keys import create_api_key
from benchbook.settings import Settings
from tests.mcp.live import live_server, mcp_http, outcome

pytestmark = pytest.mark.both_backends


@pytest.fixture
def listener() -> Iterator[tuple[str, list[str]]]:
    """A local HTTP server that records every request line; ``(root URL, paths)``."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def _any(self) -> None:
            seen.append(f"{self.command} {self.path}")
            self.send_response(404)
            self.end_headers()

        do_GET = do_POST = _any

        def log_message(self, format: str, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("suffix", ["/../internal/admin", "/%2e%2e/internal/admin", "/..%2fx"])
def test_a_members_dotted_judge_url_is_400_over_http_and_mcp_and_nothing_is_requested(
    ctx: Context,
    engine: Engine,
    settings: Settings,
    listener: tuple[str, list[str]],
    suffix: str,
) -> None:
    root, seen = listener
    body = {"id": "echo", "version": "1.0.0", "kind": "command", "config": {"argv": ["echo", "x"]}}
    harnesses.register_harness(ctx, harnesses.parse_harness(body))
    endpoints.add_endpoint(ctx, "local", f"{root}/v1")
    accounts.create_user(ctx, "mia@example.org", "Mia", "correct-horse-battery")
    accounts.add_member(ctx, "mia@example.org", "member")
    key = create_api_key(ctx, "t", "write", user="mia@example.org").key
    headers = {"Authorization": f"Bearer {key}"}
    judge = {
        "rubric": "fine",
        "base_url": f"{root}/v1{suffix}",
        "model": "m",
        "api_key_secret": "JUDGE_KEY",
    }
    request = {
        "dataset": "plain",
        "harness": "echo@1.0.0",
        "graders": [{"id": "judge", "config": judge}],
    }
    with TestClient(create_app(settings, engine)) as http:
        dataset = {
            "id": "plain",
            "version": "1.0.0",
            "cases": [{"id": "c0", "env": {"kind": "prompt"}, "task": "t", "expected": "x"}],
        }
        assert http.post("/api/datasets", json=dataset, headers=headers).status_code == 201
        secret = {"value": "sk-judge-0123456789", "hosts": [root.removeprefix("http://")]}
        put = http.put("/api/secrets/user/JUDGE_KEY", json=secret, headers=headers)
        assert put.status_code in (200, 201), put.text
        answer = http.post("/api/runs", json=request, headers=headers)
        assert answer.status_code == 400, answer.text
        error = answer.json()
        assert error["code"] == "invalid_input"
        assert error["details"]["errors"][0]["path"] == "graders[0].config.base_url"
        assert http.get("/api/runs", headers=headers).json() == []
    with live_server(settings, engine) as base, mcp_http(base, key) as mcp:
        code, message = outcome(mcp.call("start_run", {"request": request}))
        assert code == "invalid_input" and message.startswith("graders[0].config.base_url")
    assert seen == []
