"""Issue 27: integers past what a run can hold answered 500 — a reported ``sample`` of 100 or
more (a run repeats each case at most 100 times), a trace's ``?sample=10**23`` (past SQLite's
and PostgreSQL's 64-bit integers) and token counts of 10**23 in a reported trace. Each is now
400 ``invalid_input`` naming the field, over HTTP and MCP, and nothing is stored."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from benchbook.services import runs
from benchbook.services.context import Context
from benchbook.settings import Settings
from tests.api.conftest import dataset_body
from tests.mcp.live import live_server, mcp_http, outcome

HUGE = 10**23


def _report(client: TestClient, **result: Any) -> Any:
    body = {
        "dataset": "arith",
        "harness": "ext@1.0.0",
        "results": [{"case_id": "q0", "answer": "0", **result}],
    }
    return client.post("/api/runs/report", json=body)


def _refused(answer: Any, field: str) -> None:
    assert answer.status_code == 400, answer.text
    body = answer.json()
    assert body["code"] == "invalid_input"
    assert field in answer.text, body


@pytest.mark.both_backends
def test_out_of_range_integers_in_a_reported_run_are_400_naming_the_field(
    client: TestClient, ctx: Context
) -> None:
    assert client.post("/api/datasets", json=dataset_body()).status_code == 201
    _refused(_report(client, sample=100), "sample")
    _refused(_report(client, sample=HUGE), "sample")
    usage = {"input_tokens": HUGE, "output_tokens": 1}
    _refused(_report(client, trace={"usage": usage}), "input_tokens")
    _refused(_report(client, trace={"duration_ms": HUGE}), "duration_ms")
    assert runs.list_runs(ctx) == []  # nothing stored
    ok = _report(client, sample=99)
    assert ok.status_code == 201, ok.text
    run_id = ok.json()["id"]
    _refused(client.get(f"/api/runs/{run_id}/traces/q0", params={"sample": HUGE}), "sample")
    _refused(client.get(f"/api/runs/{run_id}/traces/q0", params={"sample": 100}), "sample")
    assert client.get(f"/api/runs/{run_id}/traces/q0", params={"sample": 99}).status_code == 200


def test_an_out_of_range_trace_sample_over_mcp_is_invalid_input(
    client: TestClient, engine: Engine, settings: Settings
) -> None:
    assert client.post("/api/datasets", json=dataset_body()).status_code == 201
    run_id = _report(client).json()["id"]
    with live_server(settings, engine) as url, mcp_http(url) as mcp:
        for sample in (HUGE, 100):
            arguments = {"run_id": run_id, "case_id": "q0", "sample": sample}
            code, message = outcome(mcp.call("get_run_trace", arguments))
            assert code == "invalid_input" and "sample" in message, message
