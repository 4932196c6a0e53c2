"""An ``agent`` harness's trace on the case page (issue 33 item 3): a readable conversation,
each tool call folded in ``<details>`` with its arguments and result, steps with tokens and
latency, and the limit that ended a case."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from benchbook.app import create_app
from benchbook.contracts import Dataset
from benchbook.contracts.run import RunSettings, StartRunRequest
from benchbook.services import datasets, harnesses, run_execution, runs
from benchbook.services.context import Context
from benchbook.settings import Settings
from tests.openaiserver import OpenAIServer, parallel, script, tool_call
from tests.openaiserver.allow import allow_endpoint


@pytest.fixture
def client(engine: Engine, settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings, engine), follow_redirects=False) as http:
        yield http


def test_the_case_page_shows_the_agent_conversation_with_tool_calls_folded(
    client: TestClient, ctx: Context, openai_server: OpenAIServer
) -> None:
    cases = [
        {"id": "talks", "env": {"kind": "prompt"}, "task": "Count to three.", "expected": "3"},
        {"id": "loops", "env": {"kind": "prompt"}, "task": "Never stop.", "expected": "x"},
    ]
    datasets.register_dataset(
        ctx, Dataset.model_validate({"id": "talk", "version": "1.0.0", "cases": cases})
    )

    def reply(body: dict) -> object:  # type: ignore[type-arg]
        if "Never stop" in body["messages"][1]["content"]:
            return tool_call("bash", command="echo again")
        return script(
            [
                parallel(
                    tool_call("bash", command="seq 3 && exit 4"),
                    tool_call("python", code="print('<b>1 2 3</b>')"),
                    content="Let me count.",
                ),
                tool_call("submit", answer="3"),
            ]
        )(body)

    openai_server.reply = reply
    body = {
        "id": "counter",
        "version": "1.0.0",
        "kind": "agent",
        "config": {"base_url": openai_server.url, "model": "test-model", "max_steps": 2},
    }
    harnesses.register_harness(ctx, harnesses.parse_harness(body))
    allow_endpoint(ctx, openai_server.url)
    request = StartRunRequest(
        dataset="talk", harness="counter@1.0.0", settings=RunSettings(concurrency=1)
    )
    run = run_execution.execute_run(ctx, runs.start_run(ctx, request).id)

    page = client.get(f"/runs/{run.id}/cases/talks").text
    assert 'data-testid="conversation"' in page and "2 steps, 3 tool calls" in page
    folded = re.findall(r'<details class="tool-call" data-testid="tool-call">', page)
    assert len(folded) == 3  # bash, python, submit — each folded
    results = re.findall(r'data-testid="tool-result">(.*?)</pre>', page, re.S)
    assert [html.unescape(r) for r in results] == [
        "exit code 4\n1\n2\n3\n",
        "exit code 0\n<b>1 2 3</b>\n",  # escaped on the page, never markup
        "submitted",
    ]
    assert "&lt;b&gt;1 2 3&lt;/b&gt;" in page
    assert "Let me count." in page and '<span class="badge danger">exit 4</span>' in page
    assert 'class="message role-tool"' not in page  # results live in their calls
    steps = re.findall(r'data-testid="step">step (\d)', page)
    assert steps == ["1", "2"]
    assert 'data-testid="limit"' not in page

    run_page = client.get(f"/runs/{run.id}").text
    assert re.search(r'data-testid="limit-steps"><span class="num">1</span>', run_page)
    assert "ended at the steps limit (no answer, not an error)" in run_page
    stopped = client.get(f"/runs/{run.id}/cases/loops").text
    assert "<code>limit: steps</code>" in stopped
    assert len(re.findall(r'data-testid="tool-call"', stopped)) == 2
