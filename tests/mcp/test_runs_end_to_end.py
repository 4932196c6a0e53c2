"""Runs over MCP end to end (SPEC H, D): the SDK's client against a real uvicorn server, a
workspace admin's API key, a ``command`` harness the server really executes, and the run worker
``benchbook serve`` starts — driven here one poll at a time — on both backends.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Engine

from benchbook.services import accounts
from benchbook.services import datasets as ds
from benchbook.services.context import Context
from benchbook.services.keys import create_api_key
from benchbook.services.registry import OPERATIONS
from benchbook.services.run_worker import RunWorker
from benchbook.settings import Settings
from tests.eval.test_runs import arithmetic
from tests.mcp.live import McpSession, live_server, mcp_http

RUN_TOOLS = (
    "register_harness",
    "list_harnesses",
    "get_harness",
    "delete_harness_version",
    "start_run",
    "report_run",
    "list_runs",
    "get_run",
    "list_run_results",
    "get_run_trace",
    "cancel_run",
    "resume_run",
    "retry_run",
    "rescore_run",
    "list_scorecards",
    "get_scorecard",
)
TERMINAL = ("finished", "failed", "cancelled", "budget_exhausted")
# Reads "What is a+b?" from stdin and answers a+b, off by one when a is a multiple of 3 — so of
# c0..c11 the cases c0, c3, c6 and c9 fail. No braces: argv items are templates.
CALCULATOR = (
    "import re, sys; a, b = map(int, re.findall('[0-9]+', sys.stdin.read())[:2]); "
    "print(a + b + (a % 3 == 0))"
)


@pytest.fixture
def server_url(engine: Engine, settings: Settings) -> Iterator[str]:
    """A running server (no run worker of its own) on the backend under test."""
    with live_server(settings, engine) as url:
        yield url


def _admin_key(ctx: Context) -> str:
    """An admin of ``default`` (not an installation admin) with an admin-scoped key."""
    accounts.create_user(ctx, "ada@example.org", "Ada")
    accounts.add_member(ctx, "ada@example.org", "admin")
    return create_api_key(ctx, "agent", "admin", user="ada@example.org").key


def _data(mcp: McpSession, tool: str, arguments: dict[str, Any]) -> Any:
    result = mcp.call(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content


def test_a_run_started_over_mcp_is_queued_at_once_executed_by_the_worker_and_scored(
    ctx: Context, engine: Engine, settings: Settings, server_url: str
) -> None:
    ds.register_dataset(ctx, arithmetic("sums"))
    harness = {
        "id": "calc",
        "version": "1.0.0",
        "description": "adds two numbers, badly when the first is a multiple of 3",
        "kind": "command",
        "config": {"argv": [sys.executable, "-c", CALCULATOR], "timeout_s": 30},
    }
    with mcp_http(server_url, _admin_key(ctx)) as mcp:
        registered = _data(mcp, "register_harness", {"harness": harness})
        assert (registered["id"], registered["version"], registered["created"]) == (
            "calc",
            "1.0.0",
            True,
        )
        request = {"dataset": "sums", "harness": "calc@1.0.0", "settings": {"concurrency": 4}}
        began = time.monotonic()
        run = _data(mcp, "start_run", {"request": request})
        assert time.monotonic() - began < 5  # planned and queued, nothing executed
        assert (run["status"], run["counts"]["total"], run["counts"]["done"]) == ("queued", 12, 0)
        assert (run["dataset"], run["harness"]) == ("sums@1.0.0", "calc@1.0.0")
        assert _data(mcp, "get_run", {"run_id": run["id"]})["status"] == "queued"

        assert RunWorker(engine, settings).poll_once() is True
        deadline = time.monotonic() + 30
        while (seen := _data(mcp, "get_run", {"run_id": run["id"]}))["status"] not in TERMINAL:
            assert time.monotonic() < deadline, seen
            time.sleep(0.1)
        assert seen["status"] == "finished", seen.get("error")
        assert (seen["counts"]["done"], seen["counts"]["passed"]) == (12, 8)
        assert seen["pass_rate"] == pytest.approx(8 / 12)

        card = _data(mcp, "get_scorecard", {"scorecard_id": seen["scorecard_id"]})
        assert (card["n"], card["passed"], card["errors"]) == (12, 8, 0)
        assert card["pass_rate"] == pytest.approx(8 / 12)
        results = _data(mcp, "list_run_results", {"run_id": run["id"]})["result"]
        assert [r["case_id"] for r in results if not r["passed"]] == ["c0", "c3", "c6", "c9"]
        trace = _data(mcp, "get_run_trace", {"run_id": run["id"], "case_id": "c3"})
        assert trace["answer"].strip() == "5"  # 3+1 = 4, off by one
        listed = _data(mcp, "list_runs", {"dataset": "sums"})["result"]
        assert [r["id"] for r in listed] == [run["id"]]


def test_a_run_reported_over_mcp_is_graded_like_the_executed_one(
    ctx: Context, engine: Engine, settings: Settings, server_url: str
) -> None:
    """report_run at parity with POST /api/runs/report: the answers CALCULATOR gives, reported
    for an external harness, score 8 of 12 as the executed run does."""
    ds.register_dataset(ctx, arithmetic("sums"))
    cases = list(arithmetic("sums").cases)
    results = []
    for case in cases:
        a, b = (int(x) for x in case.task.removeprefix("What is ").removesuffix("?").split("+"))
        results.append({"case_id": case.id, "answer": str(a + b + (a % 3 == 0))})
    with mcp_http(server_url, _admin_key(ctx)) as mcp:
        request = {"dataset": "sums", "harness": "my-agent@1.2.0", "results": results}
        run = _data(mcp, "report_run", {"request": request})
        assert (run["status"], run["harness"], run["counts"]["passed"]) == (
            "finished",
            "my-agent@1.2.0",
            8,
        )
        card = _data(mcp, "get_scorecard", {"scorecard_id": run["scorecard_id"]})
        assert (card["n"], card["passed"], card["errors"]) == (12, 8, 0)
        bad = mcp.call("report_run", {"request": {**request, "results": [*results, results[0]]}})
        assert bad.is_error and "results.12" in str(bad.content)


def test_every_run_and_harness_tool_is_named_after_its_service_and_fully_described(
    server_url: str,
) -> None:
    with mcp_http(server_url) as mcp:  # no users yet: the local admin
        tools = mcp.tools()
    assert list(tools) == list(OPERATIONS)
    for name in RUN_TOOLS:
        tool = tools[name]
        assert OPERATIONS[name].__name__ == name
        assert tool.description and len(tool.description) > 20, name
        properties = tool.input_schema.get("properties", {})
        assert {p: s for p, s in properties.items() if not s.get("description")} == {}, name
    assert set(tools["start_run"].input_schema["required"]) == {"request"}
    assert tools["get_run"].annotations.read_only_hint is True
    assert tools["cancel_run"].annotations.read_only_hint is not True
