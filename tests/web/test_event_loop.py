"""No request may block the server: web handlers that call blocking services (a slow Hugging
Face preview, an upload written to disk, a job start) run them off the event loop, so a real
uvicorn server keeps answering ``/api/health`` while one of them waits."""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine

from benchbook.errors import UpstreamError
from benchbook.services import imports
from benchbook.settings import Settings
from tests.mcp.live import live_server

SLOW_S = 3.0


def _slow_upstream(*_args: Any, **_kwargs: Any) -> Any:
    time.sleep(SLOW_S)  # a Hugging Face viewer that holds the connection open
    raise UpstreamError("the viewer timed out")


def test_a_slow_preview_upstream_does_not_stall_other_requests(
    engine: Engine, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(imports, "preview_benchmark_source", _slow_upstream)
    with live_server(settings, engine) as url, httpx.Client(base_url=url, timeout=30) as http:
        assert http.get("/api/health").status_code == 200  # a warm connection
        answers: list[tuple[int, float]] = []

        def preview() -> None:
            body = {"request": {"benchmark": "gsm8k"}}
            answer = httpx.post(f"{url}/import/preview", json=body, headers={"origin": url})
            answers.append((answer.status_code, time.monotonic()))

        slow = threading.Thread(target=preview)
        slow.start()
        time.sleep(0.5)  # the preview is now waiting on its upstream
        probes = []  # (seconds taken, finished at); a busy 2-core machine may slow one probe
        for _ in range(3):
            started = time.monotonic()
            assert http.get("/api/health").status_code == 200
            probes.append((time.monotonic() - started, time.monotonic()))
        slow.join(30)
    [(status, preview_done)] = answers
    assert status == 502
    fast = [took for took, done in probes if took < 0.2 and done < preview_done - 0.5]
    assert fast, f"/api/health waited behind a slow preview: {probes}, preview {preview_done}"
