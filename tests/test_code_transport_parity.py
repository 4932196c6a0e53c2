"""Who may run what, through every transport (issue 27 items 2, 3, 6), on SQLite and PostgreSQL.

A member (a ``write`` key) tries the four code paths — an inline command in a run plan, a command
in a case's own graders, ``tests-pass`` reading a case's ``metadata.test_cmd``, a case's
``env.setup`` — plus a judge on an unregistered endpoint and a report under an admin's command
harness. Each is refused with the same 403 and message over HTTP and MCP (and the web form, and
the CLI where the path exists there); an admin-registered grader works for the member; a
reported run carries ``origin: reported`` and its reporter everywhere.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from benchbook.app import create_app
from benchbook.services import accounts, graders, harnesses
from benchbook.services.context import Context
from benchbook.services.keys import create_api_key
from benchbook.settings import Settings
from tests.cli.conftest import invoke
from tests.mcp.live import live_server, mcp_http, outcome

PASSWORD = "correct-horse-battery"


def case(**extra: Any) -> dict[str, Any]:
    env: dict[str, Any] = {"kind": "repo", "source": {"files": {"README": "hi\n"}}}
    env.update(extra.pop("env", {}))
    return {"id": "c0", "env": env, "task": "look", "expected": "x", **extra}


DATASETS = {
    "plain": case(),
    "cased": case(graders=[{"id": "command", "config": {"cmd": "id"}}]),
    "tested": case(metadata={"test_cmd": "id"}),
    "setup": case(env={"setup": ["touch pwned"]}),
}
JUDGE = {"rubric": "fine", "base_url": "http://127.0.0.1:9/v1", "model": "m"}
ATTACKS: dict[str, tuple[dict[str, Any], str]] = {
    "plan command": (
        {"dataset": "plain", "graders": [{"id": "command", "config": {"cmd": "id"}}]},
        "graders[0].command",
    ),
    "case command": ({"dataset": "cased"}, "cases[0].graders[0].command"),
    "test_cmd": (
        {"dataset": "tested", "graders": [{"id": "tests-pass"}]},
        "cases[0].metadata.test_cmd",
    ),
    "setup": ({"dataset": "setup"}, "cases[0].env.setup"),
    "judge endpoint": (
        {"dataset": "plain", "graders": [{"id": "judge", "config": JUDGE}]},
        "graders[0].config.base_url",
    ),
}


@pytest.fixture
def stage(ctx: Context, engine: Engine, settings: Settings) -> Iterator[dict[str, Any]]:
    """The echo command harness (admin), member Mia's datasets (written over HTTP with her
    key), an admin key, and the app over HTTP."""
    body = {"id": "echo", "version": "1.0.0", "kind": "command", "config": {"argv": ["echo", "x"]}}
    harnesses.register_harness(ctx, harnesses.parse_harness(body))
    keys = {}
    for name, role, scope in (("mia", "member", "write"), ("ada", "admin", "admin")):
        accounts.create_user(ctx, f"{name}@example.org", name.title(), PASSWORD)
        accounts.add_member(ctx, f"{name}@example.org", role)  # type: ignore[arg-type]
        keys[name] = create_api_key(ctx, "t", scope, user=f"{name}@example.org").key  # type: ignore[arg-type]
    app = create_app(settings, engine)
    with TestClient(app, follow_redirects=False) as http:
        mia = {"Authorization": f"Bearer {keys['mia']}"}
        for dataset_id, one in DATASETS.items():
            payload = {"id": dataset_id, "version": "1.0.0", "cases": [one]}
            assert http.post("/api/datasets", json=payload, headers=mia).status_code == 201
        yield {"http": http, "keys": keys, "mia": mia}


def http_start(stage: dict[str, Any], body: dict[str, Any], who: str = "mia") -> Any:
    headers = {"Authorization": f"Bearer {stage['keys'][who]}"}
    return stage["http"].post("/api/runs", json={"harness": "echo@1.0.0", **body}, headers=headers)


@pytest.mark.both_backends  # the attacks of issue 27, on each backend
def test_a_members_code_paths_are_refused_alike_over_http_and_mcp(
    stage: dict[str, Any], engine: Engine, settings: Settings
) -> None:
    over_http = {}
    for name, (body, path) in ATTACKS.items():
        response = http_start(stage, body)
        assert response.status_code == 403, (name, response.text)
        error = response.json()
        assert error["code"] == "forbidden" and error["details"]["path"] == path, error
        over_http[name] = ("forbidden", error["message"])
    with live_server(settings, engine) as base, mcp_http(base, stage["keys"]["mia"]) as mcp:
        for name, (body, _) in ATTACKS.items():
            request = {"harness": "echo@1.0.0", **body}
            assert outcome(mcp.call("start_run", {"request": request})) == over_http[name], name
    listed = stage["http"].get("/api/runs", headers=stage["mia"]).json()
    assert listed == [], "nothing was stored"


@pytest.mark.both_backends  # the attacks of issue 27, on each backend
def test_an_admin_registered_grader_works_for_a_member_over_http_and_mcp(
    ctx: Context, stage: dict[str, Any], engine: Engine, settings: Settings
) -> None:
    grader = {"id": "readme", "version": "1.0.0", "config": {"cmd": "test -f README"}}
    refused = stage["http"].post("/api/graders", json=grader, headers=stage["mia"])
    assert refused.status_code == 403
    admin = {"Authorization": f"Bearer {stage['keys']['ada']}"}
    assert stage["http"].post("/api/graders", json=grader, headers=admin).status_code == 201
    plan = [{"id": "command", "config": {"grader": "readme@1.0.0"}}]
    started = http_start(stage, {"dataset": "plain", "graders": plan})
    assert started.status_code == 202, started.text
    with live_server(settings, engine) as base, mcp_http(base, stage["keys"]["mia"]) as mcp:
        listed = mcp.call("list_graders", {})
        assert outcome(listed) == ("ok", "") and "readme" in listed.content[0].text  # type: ignore[union-attr]
        request = {"dataset": "plain", "harness": "echo@1.0.0", "graders": plan}
        assert outcome(mcp.call("start_run", {"request": request})) == ("ok", "")
    assert graders.get_grader(ctx, "readme").config.cmd == "test -f README"


@pytest.mark.both_backends  # the attacks of issue 27, on each backend
def test_a_member_cannot_report_under_a_command_harness_and_reports_are_marked(
    stage: dict[str, Any], engine: Engine, settings: Settings, database_url: str, tmp_path: Path
) -> None:
    report = {"dataset": "plain", "harness": "echo@1.0.0", "results": [{"case_id": "c0"}]}
    refused = stage["http"].post("/api/runs/report", json=report, headers=stage["mia"])
    assert refused.status_code == 403 and refused.json()["details"]["path"] == "harness"
    with live_server(settings, engine) as base, mcp_http(base, stage["keys"]["mia"]) as mcp:
        assert outcome(mcp.call("report_run", {"request": report})) == (
            "forbidden",
            refused.json()["message"],
        )
        external = {**report, "harness": "mine@1.0.0"}
        made = stage["http"].post("/api/runs/report", json=external, headers=stage["mia"])
        assert made.status_code == 201, made.text
        run = made.json()
        mia_id = run["created_by"]
        assert (run["origin"], run["reported_by"]) == ("reported", mia_id)
        got = mcp.call("get_run", {"run_id": run["id"]}).structured_content
        assert got is not None and (got["origin"], got["reported_by"]) == ("reported", mia_id)
        listed = mcp.call("list_runs", {}).structured_content
        assert listed is not None and listed["result"][0]["origin"] == "reported"
        compared = mcp.call(
            "compare_scorecards", {"baseline": run["id"], "candidate": run["id"]}
        ).structured_content
        assert compared is not None and compared["baseline_origin"] == "reported"
        assert compared["notes"][0].startswith(f"the baseline was reported by {mia_id}")
    admin = {"Authorization": f"Bearer {stage['keys']['ada']}"}
    allowed = stage["http"].post("/api/runs/report", json=report, headers=admin)
    assert allowed.status_code == 201 and allowed.json()["origin"] == "reported"
    page = stage["http"].get("/api/runs", headers=admin).json()
    assert [r["origin"] for r in page] == ["reported", "reported"]
    # The web pages and the CLI say it too.
    http: TestClient = stage["http"]
    _log_in(http, "ada@example.org")
    listing = http.get("/runs").text
    assert listing.count('data-testid="run-origin"') == 2
    shown = http.get(f"/runs/{run['id']}").text
    assert 'data-testid="run-origin"' in shown and "Mia" in shown
    compared_page = http.get(f"/compare?baseline={run['id']}&candidate={allowed.json()['id']}")
    assert 'data-testid="compare-note"' in compared_page.text
    env = {"BENCHBOOK_HOME": str(tmp_path / "cli-home"), "DATABASE_URL": database_url}
    env["COLUMNS"] = "240"
    cli = invoke(env, "runs", "show", run["id"])
    assert cli.exit_code == 0 and f"origin reported: results reported by {mia_id}" in cli.stdout
    # Wide enough for every column whole (the runs list grew error and tag columns).
    cli_list = invoke({**env, "COLUMNS": "2000"}, "runs", "list")
    assert "(reported)" in cli_list.stdout
    cli_compare = invoke(env, "compare", run["id"], allowed.json()["id"])
    assert f"NOTE: the baseline was reported by {mia_id}" in cli_compare.stdout


def _log_in(http: TestClient, email: str) -> str:
    http.cookies.clear()
    token = re.search(r'name="csrf" value="([^"]+)"', http.get("/login").text)
    assert token
    form = {"email": email, "password": PASSWORD, "csrf": token.group(1), "next": "/"}
    assert http.post("/login", data=form).status_code == 303
    meta = re.search(r'name="csrf-token" content="([^"]+)"', http.get("/account").text)
    assert meta
    return meta.group(1)


def test_the_web_form_refuses_a_members_command_beside_the_field_with_the_same_message(
    stage: dict[str, Any],
) -> None:
    http: TestClient = stage["http"]
    expected = http_start(stage, ATTACKS["plan command"][0]).json()["message"]
    csrf = _log_in(http, "mia@example.org")
    form = {
        "csrf": csrf,
        "dataset": "plain",
        "harness": "echo@1.0.0",
        "graders": 'command={"cmd": "id"}',
    }
    page = http.post("/runs", data=form)
    assert page.status_code == 403, page.text[:400]
    found = re.findall(r'<span id="([^"]+)" class="field-error"[^>]*>(.*?)</span>', page.text, re.S)
    assert [(i, html.unescape(m)) for i, m in found] == [("graders-error", expected)]


def test_the_cli_refuses_to_run_a_members_case_command_even_as_the_local_admin(
    stage: dict[str, Any], database_url: str, tmp_path: Path
) -> None:
    env = {"BENCHBOOK_HOME": str(tmp_path / "cli-home"), "DATABASE_URL": database_url}
    expected = http_start(stage, ATTACKS["case command"][0]).json()["message"]
    result = invoke(env, "run", "cased", "--harness", "echo@1.0.0")
    assert result.exit_code != 0
    assert expected in " ".join(result.stderr.split()), result.stderr
    assert not (tmp_path / "pwned").exists()


def test_admins_add_endpoints_on_the_web_and_a_member_binds_a_secret_to_hosts(
    ctx: Context, stage: dict[str, Any]
) -> None:
    from benchbook.services import endpoints, secrets

    http: TestClient = stage["http"]
    csrf = _log_in(http, "mia@example.org")
    assert "endpoint-form" not in http.get("/members").text  # members see, admins add
    refused = http.post("/endpoints", data={"csrf": csrf, "name": "x", "url": "http://h/v1"})
    assert refused.status_code == 403
    saved = http.post(
        "/account/secrets",
        data={
            "csrf": csrf,
            "name": "MY_KEY",
            "value": "sk-mine",
            "hosts": "api.example.org, 10.0.0.1:8000",
        },
    )
    assert saved.status_code == 303
    assert "sent to 10.0.0.1:8000, api.example.org" in http.get("/account").text
    csrf = _log_in(http, "ada@example.org")
    bad = http.post("/endpoints", data={"csrf": csrf, "name": "bad", "url": "file:///etc"})
    assert bad.status_code == 400 and "endpoint-url-error" in bad.text
    added = http.post(
        "/endpoints", data={"csrf": csrf, "name": "llm", "url": "http://127.0.0.1:8000/v1/"}
    )
    assert added.status_code == 303
    assert "http://127.0.0.1:8000/v1" in http.get("/members").text
    assert [e.url for e in endpoints.list_endpoints(ctx)] == ["http://127.0.0.1:8000/v1"]
    assert http.post("/endpoints/llm/remove", data={"csrf": csrf}).status_code == 303
    assert endpoints.list_endpoints(ctx) == []
    assert secrets.list_secrets(ctx, "workspace") == []
