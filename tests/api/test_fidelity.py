"""No silent rounding and no NaN through the transports (issue 8 items 1-2): an integer beyond
64 bits survives import, storage, export, the HTTP API and MCP; ``NaN``/``Infinity`` are
rejected over HTTP and MCP as in files. Against one live server, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from sqlalchemy import Engine

from benchbook.services import accounts
from benchbook.services import datasets as ds
from benchbook.services.context import Context
from benchbook.services.keys import create_api_key
from benchbook.settings import Settings
from tests.mcp.live import live_server, mcp_http

pytestmark = pytest.mark.both_backends

DIGITS = "123456789012345678901234567890"
ROWS = '[{"id":"a","question":"q","answer":' + DIGITS + "}]"
SPEC = {
    "id": "big",
    "source": {"kind": "file"},
    "mapping": {"id_field": "id", "task_field": "question", "answer_field": "answer"},
}


@pytest.fixture
def server(engine: Engine, settings: Settings, ctx: Context) -> Iterator[tuple[str, str]]:
    accounts.create_user(ctx, "ivy@example.org", "Ivy")
    accounts.add_member(ctx, "ivy@example.org", "member")
    key = create_api_key(ctx, "k", "write", user="ivy@example.org").key
    with live_server(settings, engine) as url:
        yield url, key


def _dataset(expected: str, dataset_id: str = "nan") -> str:
    case = '{"id": "a", "env": {"kind": "prompt"}, "task": "t", "expected": ' + expected + "}"
    return '{"id": "' + dataset_id + '", "version": "1.0.0", "cases": [' + case + "]}"


def test_a_big_integer_answer_keeps_its_digits_everywhere(
    server: tuple[str, str], ctx: Context
) -> None:
    url, key = server
    auth = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=url, headers=auth, timeout=60) as http:
        made = http.post(
            "/api/benchmarks/import", json={"spec": SPEC, "text": ROWS, "format": "json"}
        )
        assert made.status_code == 201, made.text
        export = http.get("/api/datasets/big/versions/latest/cases.jsonl").text
        assert f'"expected":{DIGITS}' in export
        view = http.get("/api/datasets/big/versions/latest")
        assert f'"expected":{DIGITS}' in view.text.replace(" ", "")
        posted = http.post(
            "/api/datasets",
            content=_dataset(DIGITS, "posted"),
            headers={"Content-Type": "application/json"},
        )
        assert posted.status_code == 201, posted.text
    assert ds.get_case(ctx, "posted", "latest", "a").expected == int(DIGITS)
    with mcp_http(url, key) as mcp:
        got = mcp.call("get_dataset", {"dataset_id": "big"})
        assert got.is_error is False, got.content
        assert got.structured_content["cases"][0]["expected"] == int(DIGITS)
        assert DIGITS in got.content[0].text  # type: ignore[union-attr]
        exported = mcp.call("export_dataset", {"dataset_id": "big"}).structured_content
        assert f'"expected":{DIGITS}' in exported["jsonl"]


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_rejected_over_http_naming_the_token(
    server: tuple[str, str], token: str
) -> None:
    url, key = server
    auth = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    with httpx.Client(base_url=url, headers=auth, timeout=60) as http:
        made = http.post("/api/datasets", content=_dataset(token))
        assert made.status_code == 400, made.text
        assert f"{token} is not a JSON number" in made.json()["message"]
        assert "line 1, column 109" in made.json()["message"]
        assert http.get("/api/datasets/nan/versions/latest").status_code == 404


def test_nan_is_rejected_over_mcp_not_stored_as_null(server: tuple[str, str], ctx: Context) -> None:
    # Raw JSON-RPC: the SDK's Python client would itself turn a float NaN into null before
    # sending (pydantic's default), so only a raw body carries the token to the server.
    url, key = server
    headers = {
        "Authorization": f"Bearer {key}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    for token in ("NaN", "-Infinity"):
        call = (
            '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name":'
            ' "register_dataset", "arguments": {"dataset": ' + _dataset(token) + "}}}"
        )
        reply = httpx.post(f"{url}/mcp", content=call, headers=headers, timeout=60)
        text = reply.text
        assert '"isError":true' in text.replace(" ", ""), text
        assert "cases.0.expected" in text and "finite number" in text, text
    with mcp_http(url, key) as mcp:
        imported = mcp.call(
            "import_benchmark",
            {"request": {"spec": SPEC, "text": ROWS.replace(DIGITS, "NaN"), "format": "json"}},
        )
        assert imported.is_error is True
        assert "NaN is not a JSON number" in imported.content[0].text  # type: ignore[union-attr]
    assert ds.list_datasets(ctx).total == 0


def test_a_request_body_repeating_a_key_is_refused_naming_key_and_line() -> None:
    from benchbook.api.uploads import parse_json_body
    from benchbook.errors import InvalidInput

    with pytest.raises(InvalidInput) as err:
        parse_json_body(b'{"id": "ds",\n "cases": [{"id": "a", "task": "t", "task": "u"}]}')
    assert "duplicate key 'task'" in err.value.message and "line 2" in err.value.message
