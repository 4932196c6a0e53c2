"""The ``agent`` kind through the transports (issue 33 item 5): registered over HTTP and MCP like
every harness (admins; ``_shared`` with ``?shared=true``), its config checked the same way."""

from __future__ import annotations

import json

import httpx
from sqlalchemy import Engine

from benchbook.services.context import Context
from benchbook.settings import Settings
from tests.mcp.live import live_server, mcp_http, outcome

AGENT = {
    "id": "ref-agent",
    "version": "1.0.0",
    "kind": "agent",
    "config": {
        "base_url": "http://127.0.0.1:9/v1",
        "model": "m",
        "max_steps": 20,
        "tools": ["bash", "read_file", "submit"],
        "token_limit": 100000,
    },
}


def test_an_agent_harness_is_registered_over_http_and_read_over_mcp(
    engine: Engine, settings: Settings, ctx: Context
) -> None:
    with live_server(settings, engine) as url:
        created = httpx.post(f"{url}/api/harnesses", params={"shared": "true"}, json=AGENT)
        assert created.status_code == 201, created.text
        assert created.json()["workspace"] == "_shared"
        again = httpx.post(f"{url}/api/harnesses", params={"shared": "true"}, json=AGENT)
        assert again.status_code == 200 and again.json()["created"] is False
        bad = {**AGENT, "config": {**AGENT["config"], "tools": ["bash"], "max_step": 3}}
        refused = httpx.post(f"{url}/api/harnesses", json=bad)
        assert refused.status_code == 400
        paths = " ".join(e["path"] for e in refused.json()["details"]["errors"])
        assert "config.tools" in paths and "config.max_step" in paths, paths
        with mcp_http(url) as session:
            got = session.call("get_harness", {"harness_id": "ref-agent", "version": "latest"})
            assert outcome(got) == ("ok", "")
            body = got.structured_content or json.loads(got.content[0].text)  # type: ignore[union-attr]
            body = body.get("result", body)
            assert body["kind"] == "agent" and body["config"]["tools"] == AGENT["config"]["tools"]
            assert body["config"]["tool_output_bytes"] == 16384  # defaults filled
            unknown = {**AGENT, "id": "other", "config": {**AGENT["config"], "tools": ["sudo"]}}
            result = session.call("register_harness", {"harness": unknown})
            assert outcome(result)[0] == "invalid_input"
        listed = httpx.get(f"{url}/api/harnesses").json()
        assert [(h["id"], h["kind"], h["shared"]) for h in listed] == [("ref-agent", "agent", True)]
