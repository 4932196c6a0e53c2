"""The authorization matrix of harnesses, runs and scorecards through both transports (SPEC C,
D, H): credential (membership role × API-key scope, plus an outsider from another workspace) ×
operation × target (the actor's own workspace, another workspace), once over HTTP
(``TestClient`` with Bearer keys) and once over MCP (the SDK's client against a real uvicorn),
asserting identical outcomes — HTTP status ↔ ``isError`` code and the same message — and the
outcomes SPEC C and H ask for: ``harnesses:write`` admin only, ``runs:write`` member+ (and
cancel, resume, retry and scorecard tags on another user's run admin only),
``runs:read`` viewer+, a key never above its scope, and another workspace's run is 404 (never
403) once the action gate is passed.

Each credential × transport walk gets a fresh stage (two workspaces, each with a finished run),
so both walks start from the same state.
"""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from benchbook.app import create_app
from benchbook.contracts.run import StartRunRequest
from benchbook.services import accounts, harnesses, run_execution, runs, scorecards
from benchbook.services import datasets as ds
from benchbook.services.context import Context
from benchbook.services.keys import create_api_key, effective_role
from benchbook.settings import Settings
from tests.eval.test_runs import arithmetic
from tests.mcp.live import McpSession, live_server, mcp_http, outcome
from tests.services.interop_logs import inspect_log

OK, FORBIDDEN, NOT_FOUND = "ok", "forbidden", "not_found"
STATUS_CODES = {400: "invalid_input", 401: "unauthenticated", 403: "forbidden", 404: "not_found"}
STATUS_CODES |= {409: "conflict"}
SCOPES = ("read", "write", "admin")
LABELS = ("team", "other")  # the two workspaces of a stage
MISSING_RUN, MISSING_CARD = "run_0000000000000000", "sc_0000000000000000"
Cell = tuple[str, str]
Outcome = tuple[str, str]


def command_harness(harness_id: str) -> dict[str, Any]:
    """A tiny ``command`` harness body (echoes the task; never executed here)."""
    return {
        "id": harness_id,
        "version": "1.0.0",
        "kind": "command",
        "config": {"argv": ["echo", "{task}"]},
    }


@dataclass(frozen=True)
class Stage:
    """Workspaces ``team`` and ``other`` (names in ``ws``), each holding ``<label>-data``@1.0.0,
    harnesses ``<label>-agent`` (python) and ``<label>-old`` (command), and one finished run
    (``run[label]``, its scorecard ``card[label]``). ``key`` is the actor's; ``home`` is the
    label of the actor's workspace."""

    tag: str
    ws: dict[str, str]
    run: dict[str, str]
    card: dict[str, str]
    key: str
    home: str

    def away(self) -> str:
        """The label of the workspace the actor is not a member of."""
        return "other" if self.home == "team" else "team"


def _fill(root: Context, label: str) -> tuple[str, str]:
    """Data, harnesses and one executed run in ``root``'s workspace; ``(run id, card id)``."""
    ds.register_dataset(root, arithmetic(f"{label}-data", n=2))
    agent = {
        "id": f"{label}-agent",
        "version": "1.0.0",
        "kind": "python",
        "config": {"callable": "tests.eval.harnesses.agents:add"},
    }
    harnesses.register_harness(root, harnesses.parse_harness(agent))
    harnesses.register_harness(root, harnesses.parse_harness(command_harness(f"{label}-old")))
    request = StartRunRequest(dataset=f"{label}-data", harness=f"{label}-agent@1.0.0")
    run = run_execution.execute_run(root, runs.start_run(root, request).id)
    assert run.status == "finished" and run.scorecard_id is not None
    return run.id, run.scorecard_id


def make_stage(ctx: Context, role: str, scope: str) -> Stage:
    """A fresh stage; the actor is a ``role`` of ``team`` (``outsider``: an admin of ``other``
    and nothing in ``team``) holding a ``scope`` key."""
    tag = uuid.uuid4().hex[:8]
    ws = {label: f"rp{label[0]}-{tag}" for label in LABELS}
    run, card = {}, {}
    for label in LABELS:
        accounts.create_workspace(ctx, ws[label])
        run[label], card[label] = _fill(accounts.in_workspace(ctx, ws[label]), label)
    home = "other" if role == "outsider" else "team"
    root = accounts.in_workspace(ctx, ws[home])
    email = f"actor-{tag}@example.org"
    accounts.create_user(ctx, email, "Actor")
    # Keys are minted while an admin, then the role is set: a key above its owner's current
    # role (a demoted member's) must act at the role, not at its scope.
    accounts.create_user(ctx, f"keeper-{tag}@example.org", "Keeper")  # the last admin stays
    accounts.add_member(root, f"keeper-{tag}@example.org", "admin")
    accounts.add_member(root, email, "admin")
    key = create_api_key(root, "matrix", scope, user=email).key  # type: ignore[arg-type]
    if role not in ("admin", "outsider"):
        accounts.set_member_role(root, email, role)  # type: ignore[arg-type]
    return Stage(tag=tag, ws=ws, run=run, card=card, key=key, home=home)


# Operations in walk order: reads first, then writes; among the run writes tagging and rescore
# come first (they need a finished run), then retry and resume (which queue the run again), then
# cancel.
HARNESS_OPS = ("register_harness", "list_harnesses", "get_harness", "delete_harness_version")
RUN_READS = ("get_run", "list_run_results", "get_run_trace", "list_scorecards", "get_scorecard")
RUN_READS += ("compare_scorecards", "get_leaderboard", "export_run", "list_flaky_cases")
RUN_WRITES = ("set_scorecard_tags", "rescore_run", "retry_run", "resume_run", "cancel_run")
OPS = (*HARNESS_OPS, "list_runs", *RUN_READS, "start_run", "report_run", "import_inspect_run")
OPS += RUN_WRITES
CELLS: tuple[Cell, ...] = tuple(
    (op, target)
    for op in OPS
    for target in (("own",) if op == "register_harness" else ("own", "foreign"))
)
GATES = {"register_harness": "admin", "delete_harness_version": "admin", "start_run": "member"}
GATES |= {"report_run": "member", "import_inspect_run": "member"}
GATES |= dict.fromkeys(RUN_WRITES, "member")
RANK = {"viewer": 0, "member": 1, "admin": 2}
OWNED = ("set_scorecard_tags", "retry_run", "resume_run", "cancel_run")
"""Writes on a run that only its starter or an admin may make (issue 27): the stage's runs are
the local admin's, so below admin these are 403 after the load (404 for another workspace's)."""


def expected(role: str, scope: str) -> dict[Cell, str]:
    """SPEC C/H: the action gate of the key's effective role (403) → load (404, never 403 for
    another workspace's harness, run or scorecard); lists simply leave foreign items out."""
    acting = effective_role(scope, "admin" if role == "outsider" else role)
    table = {}
    for op, target in CELLS:
        gate = GATES.get(op, "viewer")
        if RANK[acting] < RANK[gate] or (op in OWNED and target == "own" and acting != "admin"):
            table[op, target] = FORBIDDEN
        else:
            table[op, target] = OK if target == "own" else NOT_FOUND
    return table


@dataclass(frozen=True)
class Call:
    """One cell as an HTTP request and as an MCP tool call."""

    method: str
    path: str
    body: Any
    tool: str
    arguments: dict[str, Any]


def _call(stage: Stage, op: str, target: str) -> Call:
    """The HTTP request and MCP tool call of one cell."""
    label = stage.home if target == "own" else stage.away()
    run, card = stage.run[label], stage.card[label]
    agent, old = f"{label}-agent", f"{label}-old"
    by_run: dict[str, tuple[str, str, Any, dict[str, Any]]] = {
        "get_run": ("GET", "", None, {}),
        "list_run_results": ("GET", "/results", None, {}),
        "get_run_trace": ("GET", "/traces/c0", None, {"case_id": "c0"}),
        "list_scorecards": ("GET", "/scorecards", None, {}),
        "export_run": ("GET", "/export", None, {}),
        "list_flaky_cases": ("GET", "/flaky", None, {}),
        "rescore_run": ("POST", "/rescore", {"graders": [{"id": "numeric"}]}, {}),
        "retry_run": ("POST", "/retry", None, {}),
        "resume_run": ("POST", "/resume", None, {}),
        "cancel_run": ("POST", "/cancel", None, {}),
    }
    if op in by_run:
        method, suffix, body, extra = by_run[op]
        arguments = {"run_id": run, **extra, **(body or {})}
        return Call(method, f"/api/runs/{run}{suffix}", body, op, arguments)
    if op == "get_scorecard":
        return Call("GET", f"/api/scorecards/{card}", None, op, {"scorecard_id": card})
    if op == "compare_scorecards":
        path = f"/api/scorecards/compare?baseline={card}&candidate={card}"
        return Call("GET", path, None, op, {"baseline": card, "candidate": card})
    if op == "get_leaderboard":  # a read of the dataset's board: another workspace's is 404
        path = f"/api/datasets/{label}-data/leaderboard"
        return Call("GET", path, None, op, {"dataset_id": f"{label}-data"})
    if op == "set_scorecard_tags":
        body = {"tags": ["baseline"]}
        return Call("PUT", f"/api/scorecards/{card}/tags", body, op, {"scorecard_id": card, **body})
    if op == "start_run":
        request = {"dataset": f"{label}-data", "harness": f"{agent}@1.0.0"}
        return Call("POST", "/api/runs", request, op, {"request": request})
    if op == "report_run":  # an external harness's answer, graded here (issue 16)
        results = [{"case_id": "c0", "answer": "1"}]
        request = {"dataset": f"{label}-data", "harness": "ext@1.0.0", "results": results}
        return Call("POST", "/api/runs/report", request, op, {"request": request})
    if op == "import_inspect_run":  # a real Inspect log of c0 and c1, inline (issue 31)
        request = {"dataset": f"{label}-data", "text": inspect_text()}
        return Call("POST", "/api/runs/import/inspect", request, op, {"request": request})
    if op == "register_harness":
        body = command_harness("fresh")
        return Call("POST", "/api/harnesses", body, op, {"harness": body})
    if op == "get_harness":
        args = {"harness_id": agent, "version": "1.0.0"}
        return Call("GET", f"/api/harnesses/{agent}/versions/1.0.0", None, op, args)
    if op == "delete_harness_version":
        args = {"harness_id": old, "version": "1.0.0"}
        return Call("DELETE", f"/api/harnesses/{old}/versions/1.0.0", None, op, args)
    raise AssertionError(op)


@cache
def inspect_text() -> str:
    """An Inspect AI ``.json`` log (mockllm) of the stage datasets' cases c0 and c1."""
    folder = Path(tempfile.mkdtemp(prefix="parity-inspect-"))
    path, _ = inspect_log(list(arithmetic("data", n=2).cases), folder, "data", log_format="json")
    return path.read_text()


def _listed(wanted: str, found: list[str]) -> Outcome:
    return (OK, "") if wanted in found else (NOT_FOUND, "not listed")


def _list_target(stage: Stage, op: str, target: str) -> str:
    """What a list must (own) or must not (foreign) show: a harness id or a run id."""
    label = stage.home if target == "own" else stage.away()
    return f"{label}-agent" if op == "list_harnesses" else stage.run[label]


def _http_outcome(response: Any) -> Outcome:
    if response.status_code < 300:
        return OK, ""
    body = response.json()
    assert STATUS_CODES.get(response.status_code) == body["code"], (response.status_code, body)
    return body["code"], body["message"]


def http_walk(client: TestClient, stage: Stage) -> dict[Cell, Outcome]:
    """Every cell through the HTTP API, in CELLS order."""
    headers = {"Authorization": f"Bearer {stage.key}"}
    table: dict[Cell, Outcome] = {}
    for op, target in CELLS:
        if op in ("list_harnesses", "list_runs"):
            path = "/api/harnesses" if op == "list_harnesses" else "/api/runs"
            answer = client.get(path, headers=headers)
            assert answer.status_code == 200, answer.text
            found = [item["id"] for item in answer.json()]
            table[op, target] = _listed(_list_target(stage, op, target), found)
            continue
        call = _call(stage, op, target)
        response = client.request(call.method, call.path, json=call.body, headers=headers)
        table[op, target] = _http_outcome(response)
    return table


def mcp_walk(mcp: McpSession, stage: Stage) -> dict[Cell, Outcome]:
    """Every cell through MCP tools, in CELLS order."""
    table: dict[Cell, Outcome] = {}
    for op, target in CELLS:
        if op in ("list_harnesses", "list_runs"):
            result = mcp.call(op)
            assert not result.is_error, result.content
            found = [item["id"] for item in result.structured_content["result"]]
            table[op, target] = _listed(_list_target(stage, op, target), found)
            continue
        call = _call(stage, op, target)
        table[op, target] = outcome(mcp.call(call.tool, call.arguments))
    return table


def _normalized(table: dict[Cell, Outcome], stage: Stage) -> dict[Cell, Outcome]:
    """Messages with the stage's random parts (workspace tag, run and scorecard ids) named."""
    names = {stage.tag: "<tag>"}
    for label in LABELS:
        names |= {stage.run[label]: f"<{label} run>", stage.card[label]: f"<{label} card>"}

    def plain(message: str) -> str:
        for raw, name in names.items():
            message = message.replace(raw, name)
        return message

    return {cell: (code, plain(message)) for cell, (code, message) in table.items()}


@pytest.fixture
def http(engine: Engine, settings: Settings) -> Iterator[TestClient]:
    """The HTTP API over the test database."""
    with TestClient(create_app(settings, engine=engine)) as client:
        yield client


@pytest.fixture
def server_url(engine: Engine, settings: Settings) -> Iterator[str]:
    """A real server for MCP over streamable HTTP."""
    with live_server(settings, engine) as url:
        yield url


CREDENTIALS = (*((role, scope) for role in ("viewer", "member", "admin") for scope in SCOPES),)
CREDENTIALS += (("outsider", "admin"),)


def _mcp_walk_at(server_url: str, stage: Stage) -> dict[Cell, Outcome]:
    with mcp_http(server_url, stage.key) as mcp:
        return _normalized(mcp_walk(mcp, stage), stage)


def test_every_role_and_key_scope_gets_the_same_run_and_harness_outcomes_over_http_and_mcp(
    ctx: Context, http: TestClient, server_url: str
) -> None:
    """Viewer, member and admin each with a read, write and admin key (minted before the role
    was set), and an admin of another workspace. The MCP walks run concurrently (each on its
    own stage): they wait on the network, not on each other."""
    stages = {cred: (make_stage(ctx, *cred), make_stage(ctx, *cred)) for cred in CREDENTIALS}
    inspect_text()  # Inspect runs one eval at a time: the log is made before the walks
    with ThreadPoolExecutor(max_workers=len(stages)) as pool:
        pending = {cred: pool.submit(_mcp_walk_at, server_url, s[1]) for cred, s in stages.items()}
        over_http = {cred: _normalized(http_walk(http, s[0]), s[0]) for cred, s in stages.items()}
        over_mcp = {cred: future.result() for cred, future in pending.items()}
    mismatches = {
        (*cred, *cell): (out, over_mcp[cred][cell])
        for cred, table in over_http.items()
        for cell, out in table.items()
        if over_mcp[cred][cell] != out
    }
    assert mismatches == {}, "HTTP outcome != MCP outcome"
    wrong = {
        (*cred, *cell): (code, expected(*cred)[cell])
        for cred, table in over_http.items()
        for cell, (code, _) in table.items()
        if code != expected(*cred)[cell]
    }
    assert wrong == {}, "(got, expected)"
    # the writes that answered "ok" happened, and only in the actor's own workspace
    for (role, scope), pair in stages.items():
        acting = RANK[effective_role(scope, "admin" if role == "outsider" else role)]
        writer, manager = acting >= 1, acting == 2
        for stage in pair:
            home = accounts.in_workspace(ctx, stage.ws[stage.home])
            away = accounts.in_workspace(ctx, stage.ws[stage.away()])
            mine, theirs = stage.run[stage.home], stage.run[stage.away()]
            assert runs.get_run(home, mine).status == ("cancelled" if manager else "finished")
            assert len(scorecards.list_scorecards(home, mine)) == (2 if writer else 1)
            own_card = scorecards.get_scorecard(home, stage.card[stage.home])
            assert own_card.tags == (["baseline"] if manager else [])
            assert runs.get_run(away, theirs).status == "finished"
            assert len(scorecards.list_scorecards(away, theirs)) == 1
            assert scorecards.get_scorecard(away, stage.card[stage.away()]).tags == []
    # an outsider (an admin elsewhere) is told "not found", never "forbidden", for ours
    outsider = over_http["outsider", "admin"]
    assert outsider["get_run", "foreign"] == (NOT_FOUND, "run '<team run>' not found")
    assert outsider["cancel_run", "foreign"] == (NOT_FOUND, "run '<team run>' not found")
    assert outsider["get_scorecard", "foreign"] == (NOT_FOUND, "scorecard '<team card>' not found")
    # a read key of an admin stays read-only: no harness, no run, no tag; it still compares
    assert over_http["admin", "read"]["register_harness", "own"] == (
        FORBIDDEN,
        "role 'viewer' may not harnesses:write",
    )
    assert over_http["admin", "read"]["set_scorecard_tags", "own"] == (
        FORBIDDEN,
        "role 'viewer' may not runs:write",
    )
    assert over_http["viewer", "read"]["compare_scorecards", "own"] == (OK, "")


def _missing_call(stage: Stage, op: str, run_id: str, card_id: str) -> Call:
    """``op`` on an explicit run and scorecard id (for the existence-leak comparison)."""
    fake = Stage(
        tag=stage.tag,
        ws=stage.ws,
        run={"team": run_id, "other": run_id},
        card={"team": card_id, "other": card_id},
        key=stage.key,
        home=stage.home,
    )
    return _call(fake, op, "foreign")


def test_another_workspaces_run_answers_exactly_like_a_run_that_does_not_exist(
    ctx: Context, http: TestClient, server_url: str
) -> None:
    stage = make_stage(ctx, "member", "write")
    headers = {"Authorization": f"Bearer {stage.key}"}
    theirs, card = stage.run["other"], stage.card["other"]
    with mcp_http(server_url, stage.key) as mcp:
        for op in (*RUN_READS, *RUN_WRITES):
            answers = []
            for run_id, card_id in ((theirs, card), (MISSING_RUN, MISSING_CARD)):
                call = _missing_call(stage, op, run_id, card_id)
                response = http.request(call.method, call.path, json=call.body, headers=headers)
                over_http = _http_outcome(response)
                assert outcome(mcp.call(call.tool, call.arguments)) == over_http, op
                named = over_http[1].replace(run_id, "<id>").replace(card_id, "<id>")
                answers.append((over_http[0], named))
            assert answers[0] == answers[1], op
            assert answers[0][0] == NOT_FOUND, op
    # nothing happened to the other workspace's run
    there = accounts.in_workspace(ctx, stage.ws["other"])
    assert runs.get_run(there, theirs).status == "finished"
    assert len(runs.list_runs(there)) == 1
