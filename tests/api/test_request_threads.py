"""A server process runs at most ``Settings.request_threads`` requests at once in its thread
pool (``benchbook.app.limit_request_threads``); the default 40 of Starlette's pool let 50
clients' requests interleave under one GIL (docs/benchmarks.md, "under load")."""

from __future__ import annotations

import threading
import time

import anyio.to_thread
import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from benchbook.app import create_app
from benchbook.settings import Settings


async def _most_at_once(calls: int) -> tuple[float, int]:
    """The pool's tokens, and the most of ``calls`` blocking calls that ran at once."""
    lock, running, most = threading.Lock(), [0], [0]

    def call() -> None:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1

    async with anyio.create_task_group() as group:
        for _ in range(calls):
            group.start_soon(anyio.to_thread.run_sync, call)
    return anyio.to_thread.current_default_thread_limiter().total_tokens, most[0]


def test_a_server_runs_at_most_its_request_threads_at_once(settings: Settings) -> None:
    app = create_app(settings.model_copy(update={"request_threads": 3}))
    with TestClient(app) as client:
        assert client.get("/api/health").status_code == 200
        assert client.portal is not None
        assert client.portal.call(_most_at_once, 12) == (3, 3)
    app.state.engine.dispose()


def test_eight_request_threads_by_default_and_the_environment_sets_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("BENCHBOOK_REQUEST_THREADS", raising=False)
    assert Settings().request_threads == 8
    monkeypatch.setenv("BENCHBOOK_REQUEST_THREADS", "2")
    assert Settings().request_threads == 2
    monkeypatch.setenv("BENCHBOOK_REQUEST_THREADS", "0")
    with pytest.raises(ValidationError, match="request_threads"):
        Settings()
