"""Re-import without change creates nothing (issue 8 item 8): ``bump`` whose cases and metadata
equal the latest version reports it and registers no new version. CLI, HTTP and MCP too."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from sqlalchemy import Engine

from benchbook.services import accounts
from benchbook.services import datasets as ds
from benchbook.services import imports as svc
from benchbook.services.context import Context
from benchbook.services.keys import create_api_key
from benchbook.settings import Settings
from tests.cli.conftest import cli_env as cli_env
from tests.cli.conftest import invoke
from tests.mcp.live import live_server, mcp_http

ROWS = "".join(orjson.dumps({"q": f"question {i}", "a": str(i)}).decode() + "\n" for i in range(3))
SPEC = {
    "id": "rows",
    "source": {"kind": "file"},
    "mapping": {"task_field": "q", "answer_field": "a"},
}


def _req(**fields: Any) -> dict[str, Any]:
    return {"spec": SPEC, "text": ROWS, "format": "jsonl", **fields}


def _versions(ctx: Context) -> list[str]:
    return [v.version for v in ds.list_dataset_versions(ctx, "rows")]


def test_a_bumped_import_of_the_same_rows_registers_nothing(ctx: Context) -> None:
    first = svc.import_benchmark(ctx, svc.parse_import_request(_req()))
    again = svc.import_benchmark(ctx, svc.parse_import_request(_req(bump="minor")))
    assert (again.created, again.version, again.identical_to) == (False, "1.0.0", "1.0.0")
    assert again.content_hash == first.content_hash and again.cases == 3
    assert _versions(ctx) == ["1.0.0"]


def test_a_bumped_import_of_changed_rows_still_registers_the_bump(ctx: Context) -> None:
    svc.import_benchmark(ctx, svc.parse_import_request(_req()))
    changed = svc.import_benchmark(
        ctx, svc.parse_import_request(_req(bump="patch", text=ROWS.replace("question 2", "q2")))
    )
    assert (changed.created, changed.version, changed.identical_to) == (True, "1.0.1", None)
    assert _versions(ctx) == ["1.0.1", "1.0.0"]


def test_the_cli_says_unchanged_identical_to_the_latest(
    ctx: Context, cli_env: dict[str, str], tmp_path: Path
) -> None:
    spec, data = tmp_path / "recipe.json", tmp_path / "rows.jsonl"
    spec.write_bytes(orjson.dumps(SPEC))
    data.write_text(ROWS)
    args = ("import", "--spec", str(spec), "--file", str(data))
    assert invoke(cli_env, *args).exit_code == 0
    out = invoke(cli_env, *args, "--bump", "major")
    assert out.exit_code == 0, out.output
    assert "unchanged, identical to rows@1.0.0 (3 cases)" in out.stdout
    assert _versions(ctx) == ["1.0.0"]


@pytest.fixture
def server_url(engine: Engine, settings: Settings) -> Iterator[str]:
    with live_server(settings, engine) as url:
        yield url


def test_http_and_mcp_report_the_identical_version(server_url: str, ctx: Context) -> None:
    accounts.create_user(ctx, "ivy@example.org", "Ivy")
    accounts.add_member(ctx, "ivy@example.org", "member")
    key = create_api_key(ctx, "importer", "write", user="ivy@example.org").key
    with httpx.Client(base_url=server_url, headers={"Authorization": f"Bearer {key}"}) as http:
        assert http.post("/api/benchmarks/import", json=_req()).status_code == 201
        again = http.post("/api/benchmarks/import", json=_req(bump="minor"))
        assert again.status_code == 200, again.text
        assert (again.json()["version"], again.json()["identical_to"]) == ("1.0.0", "1.0.0")
    with mcp_http(server_url, key) as mcp:
        result = mcp.call("import_benchmark", {"request": _req(bump="patch")})
        assert result.is_error is False, result.content
        assert result.structured_content["identical_to"] == "1.0.0"
    assert _versions(ctx) == ["1.0.0"]


def test_plan_version_names_what_an_import_would_register(ctx: Context) -> None:
    request = svc.parse_import_request(_req(bump="minor"))
    assert svc.plan_version(ctx, request, "rows") == {
        "latest": None,
        "version": "1.0.0",
        "bumps": {},
    }
    svc.import_benchmark(ctx, svc.parse_import_request(_req()))
    assert svc.plan_version(ctx, request, "rows") == {
        "latest": "1.0.0",
        "version": "1.0.0",
        "bumps": {"patch": "1.0.1", "minor": "1.1.0", "major": "2.0.0"},
    }
