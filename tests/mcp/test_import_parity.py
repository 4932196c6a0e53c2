"""The same benchmark import through HTTP and MCP gives identical datasets (issue 4).

Both transports run against one real server; the GSM8K test file's text is sent inline
(``ImportRequest.text``) with the catalog's ``gsm8k`` mapping, into two dataset ids, and the two
exports must match case for case once the dataset id inside positional case ids is set aside.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from sqlalchemy import Engine

from benchbook.services import accounts
from benchbook.services.context import Context
from benchbook.services.keys import create_api_key
from benchbook.settings import Settings
from tests.mcp.live import live_server, mcp_http


@pytest.fixture
def server_url(engine: Engine, settings: Settings) -> Iterator[str]:
    """A running server on the backend under test."""
    with live_server(settings, engine) as url:
        yield url


def _cases(jsonl: str, dataset_id: str) -> list[dict[str, Any]]:
    out = []
    for line in jsonl.splitlines():
        case = orjson.loads(line)
        case["id"] = case["id"].removeprefix(f"{dataset_id}-")
        out.append(case)
    return out


def test_an_import_over_http_and_over_mcp_stores_the_same_cases(
    server_url: str, ctx: Context, shared_data: Path
) -> None:
    accounts.create_user(ctx, "ivy@example.org", "Ivy")
    accounts.add_member(ctx, "ivy@example.org", "member")
    key = create_api_key(ctx, "importer", "write", user="ivy@example.org").key
    text = (shared_data / "gsm8k" / "test.jsonl").read_text()
    auth = {"Authorization": f"Bearer {key}"}

    with httpx.Client(base_url=server_url, headers=auth, timeout=120) as http:
        made = http.post(
            "/api/benchmarks/import",
            json={"benchmark": "gsm8k", "id": "gsm8k-http", "text": text, "format": "jsonl"},
        )
        assert made.status_code == 201, made.text
        http_export = http.get("/api/datasets/gsm8k-http/versions/latest/cases.jsonl").text
        http_view = http.get("/api/datasets/gsm8k-http/versions/latest").json()
        http_version = http_view["version"]["version"]

    with mcp_http(server_url, key) as mcp:
        request = {"benchmark": "gsm8k", "id": "gsm8k-mcp", "text": text, "format": "jsonl"}
        result = mcp.call("import_benchmark", {"request": request})
        assert result.is_error is False, result.content
        assert (result.structured_content["cases"], result.structured_content["created"]) == (
            1319,
            True,
        )
        mcp_export = mcp.call("export_dataset", {"dataset_id": "gsm8k-mcp"}).structured_content

    assert mcp_export["truncated"] is False
    http_cases = _cases(http_export, "gsm8k-http")
    assert len(http_cases) == 1319 and http_cases[0]["expected"] == "18"
    assert _cases(mcp_export["jsonl"], "gsm8k-mcp") == http_cases
    assert http_version == result.structured_content["version"] == "1.0.0"
