"""The OpenAPI document tells the truth (SPEC D robustness, issue 9 item 11): schemathesis runs
as ``st run --checks all`` would — every check, every phase (examples, coverage, fuzzing,
stateful), :data:`MAX_EXAMPLES` generated requests an operation, a fixed seed — in process
through the ASGI app (no sockets), on SQLite and on PostgreSQL, as an installation admin's API key
holding ``arith``. Any failure of any check fails the test, listing each one.

Hugging Face is a local HTTP server answering every request as the Hub does for an unknown
repository (404 ``RepoNotFound``), so operations that reach it stay fast and offline.

No check and no operation is excluded, and no failure is: :data:`OPEN_FAILURES` is empty.

Measured on the 2-core machine (no failures left): 10 examples → 5,810 requests a backend, 88 s
(SQLite) and 114 s (PostgreSQL) at load ~1.5; 100 examples on PostgreSQL: 11,286 requests,
773 s at load 8-10. Earlier: 10 examples → ~3,400 requests and ~50 s of CPU a backend;
wall 136 s (SQLite) and 62 s (PostgreSQL) at load ~3, 255-355 s at load ~13, 14-26 min for
both at load 9-14; 100 examples on PostgreSQL: 216 s wall at load ~13, 12 min 27 s (5 min of
CPU) at load 8.5 falling to 2.3.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi.testclient import TestClient
from schemathesis.config import SchemathesisConfig
from schemathesis.engine import events, from_schema
from sqlalchemy import Engine

from benchbook.app import create_app
from benchbook.services import accounts
from benchbook.services.context import local_admin_context
from benchbook.services.keys import create_api_key
from benchbook.settings import Settings
from tests.api.people import register

pytestmark = pytest.mark.both_backends

MAX_EXAMPLES = int(os.environ.get("BENCHBOOK_SCHEMATHESIS_EXAMPLES", "10"))
"""Generated requests per operation and phase. The issue's bar is 100
(``BENCHBOOK_SCHEMATHESIS_EXAMPLES=100``); the suite runs 10 to stay within its time budget
(measured: see the module docstring)."""
SEED = 1
"""Fixed seed (with ``deterministic``) so a failure reproduces run after run."""


#: Failures still open (issue 9 item 11), each with its cause: the test fails on any other.
#: Empty: keep it so; never add one without a cause the API cannot state yet.
OPEN_FAILURES: dict[tuple[str, str], str] = {}


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


def failures_of(
    app: Any, key: str, examples: int = MAX_EXAMPLES
) -> tuple[dict[tuple[str, str], str], int]:
    """Run schemathesis over ``app``'s document; ``(failures, requests)``: ``{(operation,
    failure title): the first such failure's message, a curl to reproduce and the answer}``
    (engine errors under the title ``error``)."""
    config = SchemathesisConfig.from_dict(
        {
            "seed": SEED,
            "suppress-health-check": ["all"],
            "headers": {"Authorization": f"Bearer {key}"},
            "generation": {"max-examples": examples, "deterministic": True},
            "workers": 1,
        }
    )
    schema = schemathesis.openapi.from_asgi("/api/openapi.json", app, config=config)
    found: dict[tuple[str, str], str] = {}
    requests = 0
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            requests += len(event.recorder.interactions)
            for case_id, nodes in event.recorder.checks.items():
                for node in nodes:
                    info = node.failure_info
                    if info is not None:
                        curl = info.steps[-1].curl if info.steps else info.code_sample
                        answer = event.recorder.find_response(case_id=case_id)
                        said = answer.content[:300].decode(errors="replace") if answer else ""
                        found.setdefault(
                            (event.recorder.label, info.failure.title),
                            f"{info.failure.message[:400]}\n    {curl[:400]}\n    -> {said}",
                        )
        elif isinstance(event, events.NonFatalError):
            found.setdefault((event.label, "error"), event.info.message)
        elif isinstance(event, events.FatalError):
            found.setdefault(("engine", "error"), repr(event.exception))
    return found, requests


def test_every_schemathesis_check_passes(
    backend: str, engine: Engine, database_url: str, hub: str, tmp_path: Path
) -> None:
    """``st run --checks all`` finds nothing, on each backend (``backend`` is parametrized)."""
    config = Settings(
        home=tmp_path,
        database_url=database_url,
        hf_endpoint=hub,
        hf_viewer_endpoint=hub,
        secret_key="schemathesis",
    )
    ctx = local_admin_context(engine, config)
    accounts.create_user(ctx, "root@example.org", "Root", installation_admin=True)
    accounts.add_member(ctx, "root@example.org", "admin")
    key = create_api_key(ctx, "schemathesis", "admin", user="root@example.org").key
    register(ctx, "arith")
    started = time.monotonic()
    found, requests = failures_of(create_app(config, engine=engine), key)
    print(
        f"{backend}: {requests} requests, {time.monotonic() - started:.0f} s, {len(found)} failures"
    )
    assert requests > 1000, f"only {requests} requests were made"
    new = {k: v for k, v in sorted(found.items()) if k not in OPEN_FAILURES}
    assert not new, f"{len(new)} schemathesis failures on {backend}:\n" + "\n".join(
        f"{op}: {title}: {detail}" for (op, title), detail in new.items()
    )


def test_a_hugging_face_id_that_cannot_be_a_url_is_400_not_500(client: TestClient) -> None:
    """Found by schemathesis: a control character in ``dataset`` crashed URL building."""
    for path in ("/api/benchmarks/hf/splits", "/api/benchmarks/hf/files"):
        response = client.get(path, params={"dataset": "owner/na\x1bme"})
        assert response.status_code == 400, response.text
        assert response.json()["code"] == "invalid_input"
