"""MCP at parity with the service registry (SPEC D) over real transports.

A real uvicorn server (temporary SQLite, or PostgreSQL through the fixtures) serves ``/mcp``;
the SDK's client talks to it over streamable HTTP. ``benchbook mcp`` is spawned for stdio.
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine

from benchbook.mcp.tools import SERVER_SIDE
from benchbook.services import accounts
from benchbook.services.context import Context
from benchbook.services.datasets import parse_dataset, register_dataset
from benchbook.services.keys import create_api_key, list_api_keys, revoke_api_key
from benchbook.services.registry import OPERATIONS
from benchbook.settings import Settings
from tests.api.conftest import dataset_body
from tests.mcp.live import live_server, mcp_http, mcp_stdio, outcome


@pytest.fixture
def server_url(engine: Engine, settings: Settings) -> Iterator[str]:
    """A running server on the backend under test."""
    with live_server(settings, engine) as url:
        yield url


def _member_key(ctx: Context, scope: str = "write") -> str:
    accounts.create_user(ctx, "mia@example.org", "Mia")
    accounts.add_member(ctx, "mia@example.org", "member")
    return create_api_key(ctx, "agent", scope, user="mia@example.org").key  # type: ignore[arg-type]


def test_the_tool_list_is_exactly_the_registered_operations(server_url: str) -> None:
    with mcp_http(server_url) as mcp:
        assert mcp.tool_names() == list(OPERATIONS)


def test_each_tool_takes_its_service_functions_parameters_but_the_server_side_ones(
    server_url: str,
) -> None:
    with mcp_http(server_url) as mcp:
        tools = mcp.tools()
    for name, fn in OPERATIONS.items():
        params = inspect.signature(fn).parameters
        expected = [p for p in params if p not in SERVER_SIDE]
        schema = tools[name].input_schema
        assert list(schema["properties"]) == expected, name
        required = [p for p in expected if params[p].default is inspect.Parameter.empty]
        assert schema.get("required", []) == required, name
        assert (inspect.getdoc(fn) or "").splitlines()[0] in tools[name].description


def test_tool_descriptions_tell_an_agent_how_versions_work(server_url: str) -> None:
    with mcp_http(server_url) as mcp:
        tools = mcp.tools()
    register = tools["register_dataset"]
    assert "new version of the same id" in register.description.lower()
    assert "no-op" in register.description
    assert register.input_schema["properties"]["dataset"]["$ref"].endswith("/Dataset")
    assert tools["delete_dataset_versions"].annotations.destructive_hint is True
    assert tools["list_datasets"].annotations.read_only_hint is True
    assert "truncated" in tools["export_dataset"].description


def test_an_sdk_client_over_streamable_http_registers_diffs_and_deletes(
    server_url: str, ctx: Context
) -> None:
    key = _member_key(ctx)
    with mcp_http(server_url, key) as mcp:
        first = mcp.call("register_dataset", {"dataset": dataset_body(version="1.0.0")})
        assert first.structured_content["created"] is True, first.content
        again = mcp.call("register_dataset", {"dataset": dataset_body(version="1.0.0")})
        assert again.structured_content["created"] is False
        changed = dataset_body(version="1.0.0", answer_offset=1)
        assert outcome(mcp.call("register_dataset", {"dataset": changed}))[0] == "conflict"
        second = dataset_body(version="1.1.0", answer_offset=1)
        assert mcp.call("register_dataset", {"dataset": second}).is_error is False

        diff = mcp.call("diff_datasets", {"dataset_id": "arith", "base": "1.0.0"})
        assert diff.is_error is False
        assert diff.structured_content["candidate"] == "1.1.0"
        assert sorted(c["id"] for c in diff.structured_content["changed"]) == ["q0", "q1", "q2"]

        deleted = mcp.call("delete_dataset_version", {"dataset_id": "arith", "version": "1.0.0"})
        assert deleted.structured_content["deleted"] == ["1.0.0"]
        versions = mcp.call("list_dataset_versions", {"dataset_id": "arith"})
        assert [v["version"] for v in versions.structured_content["result"]] == ["1.1.0"]
        assert versions.structured_content["result"][0]["created_by"] != "local-admin"


def test_export_returns_the_jsonl_text_of_the_version(server_url: str, ctx: Context) -> None:
    key = _member_key(ctx)
    with mcp_http(server_url, key) as mcp:
        mcp.call("register_dataset", {"dataset": dataset_body(n=5)})
        export = mcp.call("export_dataset", {"dataset_id": "arith"})
    data = export.structured_content
    assert (data["lines"], data["truncated"]) == (5, False)
    assert export.content[0].text == data["jsonl"]
    assert [line.split('"id":"')[1][:2] for line in data["jsonl"].splitlines()] == [
        "q0",
        "q1",
        "q2",
        "q3",
        "q4",
    ]


def test_bad_arguments_and_unknown_tools_are_tool_errors(server_url: str) -> None:
    with mcp_http(server_url) as mcp:
        bad = mcp.call("register_dataset", {"dataset": {"id": "x", "version": "one"}})
        extra = mcp.call("list_datasets", {"colour": "red"})
        unknown = mcp.call("drop_everything", {})
        missing = mcp.call("get_dataset", {"dataset_id": "nope"})
    code, message = outcome(bad)
    assert code == "invalid_input" and "dataset.version" in message
    paths = [e["path"] for e in bad.structured_content["details"]["errors"]]
    assert paths == ["dataset.version"]
    assert outcome(extra)[0] == "invalid_input" and "colour" in outcome(extra)[1]
    assert outcome(unknown)[0] == "not_found"
    assert outcome(missing) == ("not_found", "dataset 'nope' not found")
    assert missing.content[1].text == '{"id":"nope"}'


def test_a_viewer_key_is_forbidden_to_write_and_a_revoked_key_is_http_401(
    server_url: str, ctx: Context
) -> None:
    key = _member_key(ctx, scope="read")
    with mcp_http(server_url, key) as mcp:
        code, message = outcome(mcp.call("register_dataset", {"dataset": dataset_body()}))
        assert (code, message) == ("forbidden", "role 'viewer' may not datasets:write")
        assert mcp.call("list_datasets").is_error is False
    [info] = list_api_keys(ctx, all_users=True)
    revoke_api_key(ctx, info.id)
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    headers = {"accept": "application/json, text/event-stream", "authorization": f"Bearer {key}"}
    revoked = httpx.post(f"{server_url}/mcp", json=listing, headers=headers)
    assert revoked.status_code == 401 and revoked.headers["www-authenticate"].startswith("Bearer")
    assert revoked.json()["message"] == "invalid or revoked API key"


def test_a_read_scoped_key_cannot_mint_an_admin_key_over_mcp(server_url: str, ctx: Context) -> None:
    accounts.create_user(ctx, "ada@example.org", "Ada")
    accounts.add_member(ctx, "ada@example.org", "admin")
    key = create_api_key(ctx, "agent", "read", user="ada@example.org").key
    with mcp_http(server_url, key) as mcp:
        minted = mcp.call("create_api_key", {"name": "up", "scope": "admin"})
        same = mcp.call("create_api_key", {"name": "ro", "scope": "read"})
    assert outcome(minted)[0] == "invalid_input"
    assert minted.structured_content["details"]["errors"][0]["path"] == "scope"
    assert same.is_error is False
    assert sorted(k.scope for k in list_api_keys(ctx, all_users=True)) == ["read", "read"]


def test_out_of_range_cursors_and_nul_text_are_tool_errors_naming_the_field(
    server_url: str, ctx: Context
) -> None:
    register_dataset(ctx, parse_dataset(dataset_body()))
    with mcp_http(server_url) as mcp:
        after = mcp.call("get_dataset", {"dataset_id": "arith", "after": 2**64})
        before = mcp.call("get_dataset_activity", {"dataset_id": "arith", "before": -1})
        offset = mcp.call("list_datasets", {"offset": -5})
        nul = mcp.call("add_member", {"user": "a\x00b@example.org"})
        named = mcp.call("create_workspace", {"workspace_id": "ok", "name": "x\x00"})
    for result, path in [
        (after, "after"),
        (before, "before"),
        (offset, "offset"),
        (nul, "user"),
        (named, "name"),
    ]:
        assert outcome(result)[0] == "invalid_input", (path, result.content)
        assert result.structured_content["details"]["errors"][0]["path"] == path


def test_without_credentials_once_users_exist_mcp_is_http_401_with_a_bearer_challenge(
    server_url: str, ctx: Context
) -> None:
    _member_key(ctx)
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    headers = {"accept": "application/json, text/event-stream"}
    for auth in ({}, {"authorization": "Bearer bb_not-a-key"}):
        response = httpx.post(f"{server_url}/mcp", json=initialize, headers=headers | auth)
        assert response.status_code == 401, response.text
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert response.json()["code"] == "unauthenticated"
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    assert httpx.post(f"{server_url}/mcp", json=listing, headers=headers).status_code == 401


def _benchbook_command() -> str:
    script = Path(sys.executable).parent / "benchbook"
    assert script.exists(), f"console script missing: {script}"
    return str(script)


def _stdio_env(settings: Settings, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCHBOOK_")}
    env |= {
        "BENCHBOOK_HOME": str(settings.home),
        "DATABASE_URL": settings.resolved_database_url(),
        **extra,
    }
    return env


def test_benchbook_mcp_serves_the_tools_over_stdio_as_the_local_admin(
    settings: Settings, ctx: Context
) -> None:
    register_dataset(ctx, parse_dataset(dataset_body()))
    with mcp_stdio(_benchbook_command(), ["mcp"], _stdio_env(settings)) as mcp:
        assert mcp.tool_names() == list(OPERATIONS)
        listed = mcp.call("list_datasets")
    assert listed.is_error is False
    assert [d["id"] for d in listed.structured_content["items"]] == ["arith"]


def test_benchbook_mcp_over_stdio_acts_as_the_user_of_benchbook_api_key(
    settings: Settings, ctx: Context
) -> None:
    key = _member_key(ctx, scope="read")
    env = _stdio_env(settings, BENCHBOOK_API_KEY=key)
    with mcp_stdio(_benchbook_command(), ["mcp"], env) as mcp:
        denied = mcp.call("register_dataset", {"dataset": dataset_body()})
        listed: Any = mcp.call("list_datasets")
    assert outcome(denied)[0] == "forbidden"
    assert listed.structured_content["total"] == 0
