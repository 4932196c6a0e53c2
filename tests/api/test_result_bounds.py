"""Issue 27: run result pages and traces had no byte bound — a viewer's read of 300 answers of
1 MB cost the server +1 GB over HTTP and +2.35 GB over MCP, one MCP read of a 300 MB trace
+2.1 GB. Now a results page stops before ``max_page_bytes`` (at least one result; the next
page continues from the last result's cursor), a trace past it is 413 naming
``export_run_trace``, which streams it whole over HTTP (and cut at 8 MiB over MCP). The
response bytes are asserted, not timed. SQLite and PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from benchbook.app import create_app
from benchbook.contracts import Dataset
from benchbook.contracts.run import ReportRunRequest
from benchbook.services import datasets as ds
from benchbook.services.context import Context
from benchbook.services.run_reports import report_run
from benchbook.settings import Settings
from tests.api.conftest import dataset_body
from tests.mcp.live import live_server, mcp_http, outcome

BOUND = 1 << 20
ANSWER = 100_000  # characters: ten answers fill a page


@pytest.fixture
def bounded(engine: Engine, settings: Settings) -> Iterator[tuple[TestClient, Settings]]:
    """A server reading with ``max_page_bytes`` of 1 MiB."""
    tight = settings.model_copy(update={"max_page_bytes": BOUND})
    with TestClient(create_app(tight, engine=engine)) as client:
        yield client, tight


def _report(ctx: Context, results: list[dict[str, Any]], n: int) -> str:
    """Through the service: a report's JSON body is itself bounded to 1 MiB over HTTP."""
    ds.register_dataset(ctx, Dataset.model_validate(dataset_body(n=n)))
    request = {"dataset": "arith", "harness": "ext@1.0.0", "results": results}
    return report_run(ctx, ReportRunRequest.model_validate(request)).id


@pytest.mark.both_backends
def test_a_results_page_stops_at_the_byte_bound_and_the_cursor_reads_the_rest(
    bounded: tuple[TestClient, Settings], ctx: Context, engine: Engine
) -> None:
    client, _ = bounded
    results = [{"case_id": f"q{i}", "answer": f"{i}" + "x" * ANSWER} for i in range(30)]
    run_id = _report(ctx, results, n=30)
    seen: list[str] = []
    after: str | None = None
    pages = 0
    while True:
        params: dict[str, Any] = {"limit": 500} | ({"after": after} if after else {})
        answer = client.get(f"/api/runs/{run_id}/results", params=params)
        assert answer.status_code == 200
        page = answer.json()
        if not page:
            break
        pages += 1
        assert len(answer.content) <= BOUND + 64 * 1024, len(answer.content)
        seen += [r["case_id"] for r in page]
        after = f"{page[-1]['position']}:{page[-1]['sample']}"
        assert pages <= 30
    assert seen == [f"q{i}" for i in range(30)] and pages >= 3


@pytest.mark.both_backends
def test_a_trace_past_the_bound_is_413_naming_the_export_which_streams_it_whole(
    bounded: tuple[TestClient, Settings], ctx: Context, engine: Engine
) -> None:
    client, _ = bounded
    messages = [{"role": "user", "content": f"{i} " + "y" * 50_000} for i in range(40)]  # 2 MB
    reported = [{"case_id": "q0", "answer": "0", "trace": {"messages": messages}}]
    run_id = _report(ctx, reported, 1)
    refused = client.get(f"/api/runs/{run_id}/traces/q0")
    assert refused.status_code == 413, refused.status_code
    assert "export_run_trace" in refused.json()["message"]
    assert len(refused.content) < 4096
    export = client.get(f"/api/runs/{run_id}/trace-exports/q0")
    assert export.status_code == 200
    trace = json.loads(export.content)
    assert trace["messages"] == messages and trace["answer"] == "0"


def test_over_mcp_a_large_trace_is_refused_and_its_export_is_bounded(
    bounded: tuple[TestClient, Settings], ctx: Context, engine: Engine
) -> None:
    _, tight = bounded
    messages = [{"role": "user", "content": f"{i} " + "z" * 50_000} for i in range(40)]
    reported = [{"case_id": "q0", "answer": "0", "trace": {"messages": messages}}]
    run_id = _report(ctx, reported, 1)
    with live_server(tight, engine) as url, mcp_http(url) as mcp:
        code, message = outcome(mcp.call("get_run_trace", {"run_id": run_id, "case_id": "q0"}))
        assert code == "payload_too_large" and "export_run_trace" in message
        exported = mcp.call("export_run_trace", {"run_id": run_id, "case_id": "q0"})
        assert not exported.is_error
        assert json.loads(exported.content[0].text)["messages"] == messages  # type: ignore[union-attr]
        page = mcp.call("list_run_results", {"run_id": run_id})
        assert not page.is_error
