"""The client's retry policy and its light import (issue 16), against a tiny local HTTP server
that answers what each test scripts (503 once, a 400, a proxy's HTML 502) — no Benchbook server.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from benchbook.client import Client, InvalidInput, Unavailable
from benchbook.errors import BenchbookError, UpstreamError

PAGE = {"items": [], "total": 0, "limit": 50, "offset": 0}


class Scripted(ThreadingHTTPServer):
    """Answers the queued ``(status, headers, body)`` in order, then 200 with :data:`PAGE`."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.script: list[tuple[int, dict[str, str], bytes]] = []
        self.seen: list[tuple[str, str]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class Handler(BaseHTTPRequestHandler):
    server: Scripted

    def _answer(self) -> None:
        self.server.seen.append((self.command, self.path))
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        status, headers, body = (
            self.server.script.pop(0)
            if self.server.script
            else (200, {}, json.dumps(PAGE).encode())
        )
        self.send_response(status)
        for key, value in {"content-type": "application/json", **headers}.items():
            self.send_header(key, value)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def scripted() -> Iterator[Scripted]:
    server = Scripted()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def envelope(code: str, message: str, **details: Any) -> bytes:
    return json.dumps({"code": code, "message": message, "details": details}).encode()


def test_a_503_is_retried_and_the_next_answer_returned(scripted: Scripted) -> None:
    scripted.script.append(
        (503, {"retry-after": "0"}, envelope("unavailable", "busy", retry_after_s=0))
    )
    with Client(scripted.url, "bb_x") as client:
        page = client.datasets.list()
    assert page.total == 0 and len(scripted.seen) == 2
    assert (
        scripted.seen[0]
        == scripted.seen[1]
        == ("GET", "/api/datasets?owner=all&sort=name&limit=50&offset=0")
    )


def test_a_4xx_is_never_retried_and_keeps_its_code_and_details(scripted: Scripted) -> None:
    scripted.script.append(
        (400, {}, envelope("invalid_input", "bad", errors=[{"path": "x", "message": "no"}]))
    )
    with Client(scripted.url) as client, pytest.raises(InvalidInput) as err:
        client.datasets.register({"id": "x"})
    assert len(scripted.seen) == 1
    assert err.value.message == "bad" and err.value.details["errors"][0]["path"] == "x"


def test_502s_through_every_attempt_raise_the_answers_error(scripted: Scripted) -> None:
    scripted.script += [(502, {"content-type": "text/html"}, b"<h1>Bad gateway</h1>")] * 2
    with Client(scripted.url, retries=2) as client, pytest.raises(UpstreamError) as err:
        client.datasets.versions("x")
    assert len(scripted.seen) == 2 and err.value.details["status"] == 502
    scripted.script.append((500, {}, envelope("internal_error", "see the log")))
    with Client(scripted.url) as client, pytest.raises(BenchbookError) as unknown:
        client.datasets.versions("x")
    assert unknown.value.details["code"] == "internal_error" and len(scripted.seen) == 3


def test_an_unreachable_server_is_unavailable_after_the_retries() -> None:
    server = Scripted()  # bound, then closed: nothing listens on its port
    url = server.url
    server.server_close()
    with Client(url, retries=2) as client, pytest.raises(Unavailable, match="cannot reach"):
        client.datasets.list()


def test_importing_the_client_loads_no_server_framework() -> None:
    code = (
        "import sys, benchbook.client; heavy = {'sqlalchemy', 'fastapi', 'starlette', 'uvicorn',"
        " 'alembic', 'pyarrow', 'datasets', 'inspect_ai', 'numpy', 'scipy', 'mcp'};"
        " print(sorted({m.split('.')[0] for m in sys.modules} & heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_url_and_key_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCHBOOK_URL", "http://127.0.0.1:1/")
    monkeypatch.setenv("BENCHBOOK_API_KEY", "bb_from_env")
    with Client() as client:
        assert client.url == "http://127.0.0.1:1"
        assert client.http.headers["authorization"] == "Bearer bb_from_env"


def test_an_unknown_code_maps_to_the_base_class_whatever_was_imported_before() -> None:
    """The MCP server's private ``internal_error`` class, imported before the client, once
    made the client raise it without ``details.code`` (a failure that depended on test order)."""
    probe = (
        "import benchbook.mcp.errors\n"
        "from benchbook.client._calls import error_of_envelope\n"
        "from benchbook.errors import BenchbookError, InvalidInput\n"
        "e = error_of_envelope('internal_error', 'm', {}, 500)\n"
        "assert type(e) is BenchbookError and e.details['code'] == 'internal_error', type(e)\n"
        "assert type(error_of_envelope('invalid_input', 'm', {})) is InvalidInput\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
