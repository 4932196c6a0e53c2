"""Fixtures of the runtime tests: a runtime config in ``tmp_path`` and a one-call case runner."""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Iterator, Mapping
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from benchbook.contracts.run import CaseInput, RuntimeResult
from benchbook.runtime import RuntimeConfig
from tests.runtime.runner import AnyHarness, RunCase, run_case_async


@pytest.fixture
def runtime_config(tmp_path: Path) -> RuntimeConfig:
    """Working copies under ``tmp_path/work``, mirrors under ``tmp_path/mirrors``."""
    return RuntimeConfig(work_root=tmp_path / "work", mirrors=tmp_path / "mirrors")


@pytest.fixture
def run_case(runtime_config: RuntimeConfig) -> RunCase:
    """``run_case(harness, case_input, secrets=None, config=None) -> RuntimeResult``."""

    def run(
        harness: AnyHarness,
        case_input: CaseInput,
        secrets: Mapping[str, str] | None = None,
        config: RuntimeConfig | None = None,
    ) -> RuntimeResult:
        return asyncio.run(run_case_async(harness, case_input, config or runtime_config, secrets))

    return run


@pytest.fixture
def site(tmp_path: Path) -> Iterator[str]:
    """Two pages on 127.0.0.1: ``start.html`` links to ``done.html`` (title ``Checkout done``)."""
    root = tmp_path / "site"
    root.mkdir()
    (root / "start.html").write_text(
        "<html><head><title>Start</title></head><body>"
        '<a id="next" href="done.html">next</a></body></html>'
    )
    (root / "done.html").write_text(
        "<html><head><title>Checkout done</title></head>"
        '<body style="background:#c00"><h1>Done</h1></body></html>'
    )

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
