"""The OpenAPI document exercised by schemathesis (SPEC D robustness): every operation gets
bounded, deterministic generated requests against a real server (uvicorn, temporary SQLite)
authenticated as an installation admin's API key; no answer may be a server error, and answers
must conform to the documented status codes, content types and response schemas.

Hugging Face is a local HTTP server answering every request as the Hub does for an unknown
repository (404 ``RepoNotFound``), so operations that reach it stay fast and offline.
"""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from schemathesis.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from benchbook.app import create_app
from benchbook.services import accounts
from benchbook.services.context import local_admin_context, open_engine
from benchbook.services.keys import create_api_key
from benchbook.settings import Settings
from benchbook.store.engine import make_engine
from tests.api.people import bearer, register
from tests.mcp.live import live_server

MAX_EXAMPLES = 25
"""Generated requests per operation."""
CHECKS = [status_code_conformance, response_schema_conformance, content_type_conformance]


@dataclass(frozen=True)
class Server:
    """A running server and an installation admin's API key for it."""

    url: str
    key: str


def served_document() -> dict[str, Any]:
    """The OpenAPI document ``create_app`` serves (built once at collection, without a
    database: generating the document touches no table)."""
    app = create_app(Settings(home=Path(tempfile.gettempdir())), engine=make_engine("sqlite://"))
    document = app.openapi()
    app.state.engine.dispose()
    return document


class UnknownRepo(BaseHTTPRequestHandler):
    """The Hub's answers with no repositories: search finds none, any repo is unknown."""

    def do_GET(self) -> None:
        search = self.path.split("?")[0] == "/api/datasets"
        body = b"[]" if search else b'{"error": "Repository not found"}'
        self.send_response(200 if search else 404)
        self.send_header("Content-Type", "application/json")
        if not search:
            self.send_header("X-Error-Code", "RepoNotFound")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Silence per-request logging."""


@pytest.fixture(scope="module")
def hub() -> Iterator[str]:
    """The fake Hub's base URL."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), UnknownRepo)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def server(hub: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """uvicorn over a temporary SQLite database holding ``arith`` and an admin key."""
    home: Path = tmp_path_factory.mktemp("schemathesis")
    config = Settings(
        home=home,
        database_url=f"sqlite:///{home / 'benchbook.db'}",
        hf_endpoint=hub,
        hf_viewer_endpoint=hub,
        secret_key="schemathesis",
    )
    engine = open_engine(config)
    ctx = local_admin_context(engine, config)
    accounts.create_user(ctx, "root@example.org", "Root", installation_admin=True)
    accounts.add_member(ctx, "root@example.org", "admin")
    key = create_api_key(ctx, "schemathesis", "admin", user="root@example.org").key
    register(ctx, "arith")
    with live_server(config, engine) as url:
        yield Server(url, key)
    engine.dispose()


schema = schemathesis.openapi.from_dict(served_document())


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_no_operation_answers_a_server_error_or_off_schema(
    case: schemathesis.Case, server: Server
) -> None:
    response = case.call(base_url=server.url, headers=bearer(server.key))
    assert response.status_code < 500, f"{case.method} {case.formatted_path}: {response.text}"
    case.validate_response(response, checks=CHECKS)


def test_a_hugging_face_id_that_cannot_be_a_url_is_400_not_500(client: TestClient) -> None:
    """Found by schemathesis: a control character in ``dataset`` crashed URL building."""
    for path in ("/api/benchmarks/hf/splits", "/api/benchmarks/hf/files"):
        response = client.get(path, params={"dataset": "owner/na\x1bme"})
        assert response.status_code == 400, response.text
        assert response.json()["code"] == "invalid_input"
