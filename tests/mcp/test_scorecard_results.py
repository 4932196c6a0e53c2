"""Issue 28 item 4: a rescore's per-case results are first-class — the same page of results
and verdicts over the service, HTTP (both routes), MCP (the SDK's client against a real
uvicorn) and the Python client; and resume's new budget is a field on every transport.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine

from benchbook.client import Client
from benchbook.contracts.dataset import GraderSpec
from benchbook.contracts.run import RunSettings, StartRunRequest
from benchbook.services import accounts, run_execution, run_results, runs, scorecards
from benchbook.services import datasets as ds
from benchbook.services.context import Context
from benchbook.services.keys import create_api_key
from benchbook.settings import Settings
from tests.eval.test_runs import arithmetic, python_harness
from tests.mcp.live import live_server, mcp_http

pytestmark = pytest.mark.both_backends  # issue 28: on SQLite and PostgreSQL


@pytest.fixture
def server_url(engine: Engine, settings: Settings) -> Iterator[str]:
    with live_server(settings, engine) as url:
        yield url


def _key(ctx: Context) -> str:
    accounts.create_user(ctx, "vi@example.org", "Vi")
    accounts.add_member(ctx, "vi@example.org", "viewer")
    return create_api_key(ctx, "reader", "read", user="vi@example.org").key


def _verdicts(items: list[Any]) -> list[tuple[str, bool | None]]:
    return [
        (r["case_id"], r["passed"]) if isinstance(r, dict) else (r.case_id, r.passed) for r in items
    ]


def test_a_rescores_results_read_the_same_on_every_transport(ctx: Context, server_url: str) -> None:
    ds.register_dataset(ctx, arithmetic("sums", n=6))
    request = StartRunRequest(
        dataset="sums", harness=python_harness(ctx, "add"), settings=RunSettings(concurrency=2)
    )
    run = run_execution.execute_run(ctx, runs.start_run(ctx, request).id)
    assert run.pass_rate == 1.0  # numeric: every answer right
    # answers 1..6: the regex passes only 1 and 3
    card = scorecards.rescore_run(
        ctx, run.id, [GraderSpec(id="regex", config={"pattern": "^[13]$"})]
    )
    expected = [(f"c{i}", i in (0, 2)) for i in range(6)]
    assert _verdicts(run_results.list_scorecard_results(ctx, card.id)) == expected
    assert _verdicts(run_results.list_run_results(ctx, run.id, scorecard=card.id)) == expected
    failed = run_results.list_run_results(ctx, run.id, outcome="failed", scorecard=card.id)
    assert [r.case_id for r in failed] == ["c1", "c3", "c4", "c5"]  # filters follow the card

    key = _key(ctx)
    headers = {"Authorization": f"Bearer {key}"}
    by_card = httpx.get(f"{server_url}/api/scorecards/{card.id}/results", headers=headers)
    assert by_card.status_code == 200, by_card.text
    assert _verdicts(by_card.json()) == expected
    params = {"scorecard": card.id, "outcome": "passed"}
    by_run = httpx.get(f"{server_url}/api/runs/{run.id}/results", headers=headers, params=params)
    assert [r["case_id"] for r in by_run.json()] == ["c0", "c2"]
    other = httpx.get(
        f"{server_url}/api/runs/{run.id}/results", headers=headers, params={"scorecard": "sc_x"}
    )
    assert other.status_code == 404

    with mcp_http(server_url, key) as mcp:
        result = mcp.call("list_scorecard_results", {"scorecard_id": card.id})
        assert not result.is_error, result.content
        assert _verdicts(result.structured_content["result"]) == expected
        result = mcp.call("list_run_results", {"run_id": run.id, "scorecard": card.id})
        assert _verdicts(result.structured_content["result"]) == expected
        schema = mcp.tools()["resume_run"].input_schema
        assert "budget_usd" in schema["properties"]

    client = Client(server_url, key)
    assert _verdicts(list(client.runs.scorecard_results(card.id))) == expected
    assert _verdicts(list(client.runs.results(run.id, scorecard=card.id))) == expected
    assert _verdicts(list(client.runs.results(run.id))) == [(f"c{i}", True) for i in range(6)]
