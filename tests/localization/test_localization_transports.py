"""The localization bridge operations over HTTP and MCP (SPEC D): the same outcome and the same
data through both, for a viewer and a member, with the gates of SPEC I (exports and the
upstream comparison ``runs:read``; importing a report and running the harness ``runs:write``;
a scorer command in a request only from an installation admin)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from benchbook.app import create_app
from benchbook.services import accounts
from benchbook.services.keys import create_api_key
from tests.localization.conftest import ContextBenchRun
from tests.localization.test_contextbench_bridge import scorer
from tests.localization.test_swebench_grading import XARRAY, instance_report
from tests.mcp.live import live_server, mcp_http, outcome

STATUS = {200: "ok", 400: "invalid_input", 403: "forbidden", 404: "not_found"}
VOLATILE = ("argv", "duration_ms", "id", "created_at", "stderr_tail", "rescore_of")


@pytest.fixture
def served(cb_run: ContextBenchRun) -> Iterator[tuple[ContextBenchRun, TestClient, str]]:
    settings = cb_run.ctx.settings.model_copy(
        update={"contextbench_scorer_cmd": scorer(), "swebench_python": "/nonexistent/python"}
    )
    engine = cb_run.ctx.engine
    with (
        TestClient(create_app(settings, engine=engine)) as client,
        live_server(settings, engine) as url,
    ):
        yield cb_run, client, url


def calls(run_id: str) -> list[tuple[str, str, str, Any, dict[str, Any]]]:
    """``(operation, method, path, body, MCP arguments)`` of each new operation."""
    base = f"/api/runs/{run_id}"
    report = {XARRAY: instance_report(True, [])}
    return [
        ("export_localization_run", "GET", f"{base}/localization/export", None, {}),
        ("score_localization_upstream", "POST", f"{base}/localization/upstream", {}, {}),
        (
            "score_localization_upstream",
            "POST",
            f"{base}/localization/upstream",
            {"scorer_cmd": "true"},
            {"scorer_cmd": "true"},
        ),
        ("export_swebench_predictions", "GET", f"{base}/swebench/predictions", None, {}),
        ("import_swebench_report", "POST", f"{base}/swebench/report", {"report": report}, {}),
        ("evaluate_swebench_run", "POST", f"{base}/swebench/evaluate", {}, {}),
    ]


def _plain(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _plain(v) for k, v in data.items() if k not in VOLATILE}
    if isinstance(data, list):
        return [_plain(v) for v in data]
    return data


@pytest.mark.parametrize(
    ("role", "expected"),
    [
        ("viewer", ["ok", "ok", "forbidden", "ok", "forbidden", "forbidden"]),
        ("member", ["ok", "ok", "forbidden", "ok", "ok", "ok"]),
    ],
)
def test_the_bridge_operations_answer_alike_over_http_and_mcp(
    served: tuple[ContextBenchRun, TestClient, str], role: str, expected: list[str]
) -> None:
    cb_run, client, url = served
    email = f"{role}@example.org"
    accounts.create_user(cb_run.ctx, email, role.title())
    accounts.add_member(cb_run.ctx, email, role)  # type: ignore[arg-type]
    scope = "read" if role == "viewer" else "write"
    key = create_api_key(cb_run.ctx, "bridge", scope, user=email).key
    headers = {"Authorization": f"Bearer {key}"}
    got_http, got_mcp = [], []
    with mcp_http(url, key) as mcp:
        for op, method, path, body, extra in calls(cb_run.run_id):
            response = client.request(method, path, json=body, headers=headers)
            arguments = {"run_id": cb_run.run_id, **(body or {}), **extra}
            result = mcp.call(op, arguments)
            got_http.append(STATUS[response.status_code])
            got_mcp.append(outcome(result)[0])
            if response.status_code == 200 and op != "import_swebench_report":
                assert _plain(result.structured_content) == _plain(response.json()), op
    assert got_http == got_mcp == expected
    if role == "member":
        evaluated = client.post(
            f"/api/runs/{cb_run.run_id}/swebench/evaluate", json={}, headers=headers
        ).json()
        assert evaluated["status"] == "unavailable"


def test_derive_gold_locations_answers_alike_over_http_and_mcp(
    served: tuple[ContextBenchRun, TestClient, str],
) -> None:
    cb_run, client, url = served
    accounts.create_user(cb_run.ctx, "val@example.org", "Val")
    accounts.add_member(cb_run.ctx, "val@example.org", "viewer")
    key = create_api_key(cb_run.ctx, "gold", "read", user="val@example.org").key
    headers = {"Authorization": f"Bearer {key}"}
    patch = "--- a/m.py\n+++ b/m.py\n@@ -3,0 +4 @@\n+x = 1\n"
    bodies = [
        {
            "dataset": "contextbench",
            "case_id": "SWE-Bench-Verified__python__maintenance__bugfix__90532e38",
        },
        {"patch": patch},
        {"patch": patch.replace("+4 @@", "+4,2 @@")},  # shorter than its header
        {"dataset": "contextbench", "case_id": "nope"},
    ]
    got = []
    with mcp_http(url, key) as mcp:
        for body in bodies:
            response = client.post("/api/localization/gold", json=body, headers=headers)
            result = mcp.call("derive_gold_locations", body)
            got.append((STATUS[response.status_code], outcome(result)[0]))
            if response.status_code == 200:
                assert result.structured_content == response.json()
    assert got == [("ok", "ok"), ("ok", "ok"), ("invalid_input", "invalid_input"),
                   ("not_found", "not_found")]  # fmt: skip
