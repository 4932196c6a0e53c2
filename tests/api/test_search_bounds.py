"""Over HTTP, MCP and the web pages, long search and filter text is refused naming the
parameter (was 500 "LIKE or GLOB pattern too complex" on SQLite) — a viewer's read is enough to
send it. SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from benchbook.settings import Settings
from tests.api.conftest import dataset_body
from tests.mcp.live import live_server, mcp_http, outcome

LONG = 60_000
MESSAGE = "at most 512 characters"

pytestmark = pytest.mark.both_backends


@pytest.mark.parametrize(
    ("url", "params", "field"),
    [
        ("/api/datasets", {"search": "a" * LONG}, "search"),
        ("/api/datasets", {"search": "_" * LONG}, "search"),
        ("/api/datasets/arith/versions/1.0.0/search", {"q": "a" * LONG}, "q"),
        ("/api/runs", {"harness": "a" * LONG}, "harness"),
        ("/api/runs", {"dataset": "a" * LONG}, "dataset"),
    ],
)
def test_long_search_text_is_400_naming_the_parameter(
    client: TestClient, url: str, params: dict[str, str], field: str
) -> None:
    assert client.post("/api/datasets", json=dataset_body()).status_code == 201
    answer = client.get(url, params=params)
    assert answer.status_code == 400, answer.text
    assert f"{field}: {MESSAGE}" in answer.text


def test_over_mcp_long_search_text_is_invalid_input(settings: Settings, engine: Engine) -> None:
    with live_server(settings, engine) as url, mcp_http(url) as mcp:
        for tool, args in (
            ("list_datasets", {"search": "a" * LONG}),
            ("list_runs", {"harness": "a" * LONG}),
        ):
            code, message = outcome(mcp.call(tool, args))
            assert (code, MESSAGE in message) == ("invalid_input", True), (tool, message)
