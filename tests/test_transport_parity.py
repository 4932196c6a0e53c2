"""The authorization matrix through both transports (SPEC C, D): role (viewer, member, admin) ×
operation (read, list, register, tag, delete own, delete another's, bulk delete) × target (own
workspace, another workspace, ``_shared``), once over HTTP (``TestClient`` with API keys) and
once over MCP (the SDK's client against a real uvicorn server), asserting identical outcomes —
HTTP status ↔ ``isError`` code (401/403/404/409 ↔ unauthenticated/forbidden/not_found/conflict)
and the same message — and the outcomes SPEC C asks for.

Each role × transport walk gets a fresh team, so both walks start from the same state.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from benchbook.app import create_app
from benchbook.errors import NotFound
from benchbook.services import accounts
from benchbook.services import datasets as svc
from benchbook.services.auth import authenticate_api_key
from benchbook.services.context import Context
from benchbook.services.keys import create_api_key, list_api_keys, revoke_api_key
from benchbook.settings import Settings
from tests.api.conftest import dataset_body
from tests.mcp.live import McpSession, live_server, mcp_http, outcome

OK, FORBIDDEN, NOT_FOUND = "ok", "forbidden", "not_found"
STATUS_CODES = {401: "unauthenticated", 403: "forbidden", 404: "not_found", 409: "conflict"}
ROLES = ("viewer", "member", "admin")
Cell = tuple[str, str]
Outcome = tuple[str, str]


@dataclass(frozen=True)
class Team:
    """``actor`` (the role under test) and ``peer`` (a member) in ``ws``; ``x`` in ``other``."""

    tag: str
    ws: str
    key: str


def _as(root: Context, key: str) -> Context:
    return Context(
        principal=authenticate_api_key(root.engine, key), engine=root.engine, settings=root.settings
    )


def _register(ctx: Context, dataset_id: str, version: str, shared: bool = False) -> None:
    svc.register_dataset(ctx, svc.parse_dataset(dataset_body(dataset_id, version)), shared)


def make_team(ctx: Context, role: str) -> Team:
    """A fresh workspace pair. In ``ws``: ``r`` and ``t`` (by the local admin), ``mine`` and
    ``bulk`` 1.0.0 (by the actor, registered while a member), ``theirs`` and ``bulk`` 1.1.0 (by
    the peer). ``x`` lives in ``other``; ``pub`` in ``_shared``. Then the actor gets ``role``."""
    tag = uuid.uuid4().hex[:8]
    ws, other = f"tp-{tag}", f"tpo-{tag}"
    accounts.create_workspace(ctx, ws)
    accounts.create_workspace(ctx, other)
    root = accounts.in_workspace(ctx, ws)
    keys = {}
    for name in ("actor", "peer"):
        email = f"{name}-{tag}@example.org"
        accounts.create_user(ctx, email, name.title())
        accounts.add_member(root, email, "member")
        keys[name] = create_api_key(root, "matrix", "write", user=email).key
    for dataset_id in ("r", "t"):
        _register(root, dataset_id, "1.0.0")
    _register(_as(root, keys["actor"]), "mine", "1.0.0")
    _register(_as(root, keys["actor"]), "bulk", "1.0.0")
    _register(_as(root, keys["peer"]), "theirs", "1.0.0")
    _register(_as(root, keys["peer"]), "bulk", "1.1.0")
    _register(accounts.in_workspace(ctx, other), "x", "1.0.0")
    _register(ctx, "pub", "1.0.0", shared=True)
    actor = f"actor-{tag}@example.org"
    if role != "member":
        accounts.set_member_role(root, actor, role)  # type: ignore[arg-type]
    if role == "admin":
        keys["actor"] = create_api_key(root, "matrix-admin", "admin", user=actor).key
    return Team(tag=tag, ws=ws, key=keys["actor"])


# (operation, target) → (dataset id, versions for deletes and tags)
CELLS: dict[Cell, tuple[str, list[str]]] = {
    **{(op, "own"): ("r", []) for op in ("read", "list")},
    **{(op, "other"): ("x", []) for op in ("read", "list")},
    **{(op, "shared"): ("pub", []) for op in ("read", "list")},
    ("register", "own"): ("fresh", []),
    ("register", "shared"): ("fresh", []),
    ("tag", "own"): ("t", ["1.0.0"]),
    ("tag", "other"): ("x", ["1.0.0"]),
    ("tag", "shared"): ("pub", ["1.0.0"]),
    ("delete own", "own"): ("mine", ["1.0.0"]),
    ("delete another's", "own"): ("theirs", ["1.0.0"]),
    ("delete another's", "other"): ("x", ["1.0.0"]),
    ("delete another's", "shared"): ("pub", ["1.0.0"]),
    ("bulk delete", "own"): ("bulk", ["1.0.0", "1.1.0"]),
    ("bulk delete", "other"): ("x", ["1.0.0"]),
    ("bulk delete", "shared"): ("pub", ["1.0.0"]),
}


def expected(role: str) -> dict[Cell, str]:
    """SPEC C: action gate (403) → load (404) → ownership (403); no existence leak."""
    gate = FORBIDDEN if role == "viewer" else None
    table = {cell: OK for cell in CELLS}
    table |= {("read", "other"): NOT_FOUND, ("list", "other"): NOT_FOUND}
    table["register", "own"] = gate or OK
    table["register", "shared"] = FORBIDDEN  # only installation admins publish into _shared
    table |= {("tag", "own"): gate or OK, ("tag", "other"): gate or NOT_FOUND}
    table["tag", "shared"] = gate or NOT_FOUND
    # Creator override: the version's creator may delete it without datasets:delete, but a
    # viewer (for example a creator demoted later) is read-only: the write gate comes first.
    table["delete own", "own"] = gate or OK
    table["delete another's", "own"] = OK if role == "admin" else FORBIDDEN
    table["bulk delete", "own"] = (
        OK if role == "admin" else FORBIDDEN
    )  # one of the two is not theirs
    for op in ("delete another's", "bulk delete"):
        table |= {(op, "other"): gate or NOT_FOUND, (op, "shared"): gate or NOT_FOUND}
    return table


def _http_outcome(response: Any) -> Outcome:
    if response.status_code < 300:
        return OK, ""
    body = response.json()
    assert STATUS_CODES.get(response.status_code) == body["code"], (response.status_code, body)
    return body["code"], body["message"]


def _http_call(
    client: TestClient, key: str, op: str, target: str, dataset_id: str, versions: list[str]
) -> Any:
    """The HTTP request of one cell."""
    headers = {"Authorization": f"Bearer {key}"}
    base = f"/api/datasets/{dataset_id}"
    if op == "read":
        return client.get(f"{base}/versions/latest", headers=headers)
    if op == "register":
        shared = {"shared": target == "shared"}
        return client.post(
            "/api/datasets", params=shared, json=dataset_body(dataset_id), headers=headers
        )
    if op == "tag":
        tags = {"tags": ["prod"]}
        return client.put(f"{base}/versions/{versions[0]}/tags", json=tags, headers=headers)
    if op == "bulk delete":
        return client.delete(base, params={"versions": versions}, headers=headers)
    return client.delete(f"{base}/versions/{versions[0]}", headers=headers)


def http_walk(client: TestClient, key: str) -> dict[Cell, Outcome]:
    """Every cell through the HTTP API, in CELLS order."""
    table: dict[Cell, Outcome] = {}
    for (op, target), (dataset_id, versions) in CELLS.items():
        if op == "list":
            auth = {"Authorization": f"Bearer {key}"}
            page = client.get("/api/datasets", params={"limit": 1000}, headers=auth).json()
            table[op, target] = _listed(dataset_id, [d["id"] for d in page["items"]])
            continue
        response = _http_call(client, key, op, target, dataset_id, versions)
        table[op, target] = _http_outcome(response)
    return table


def _tool_call(op: str, target: str, dataset_id: str, versions: list[str]) -> tuple[str, Any]:
    """The MCP tool and arguments of one cell."""
    if op == "read":
        return "get_dataset", {"dataset_id": dataset_id, "ref": "latest"}
    if op == "register":
        return "register_dataset", {
            "dataset": dataset_body(dataset_id),
            "shared": target == "shared",
        }
    if op == "tag":
        return "set_dataset_version_tags", {
            "dataset_id": dataset_id,
            "version": versions[0],
            "tags": ["prod"],
        }
    if op == "bulk delete":
        return "delete_dataset_versions", {"dataset_id": dataset_id, "versions": versions}
    return "delete_dataset_version", {"dataset_id": dataset_id, "version": versions[0]}


def mcp_walk(mcp: McpSession) -> dict[Cell, Outcome]:
    """Every cell through MCP tools, in CELLS order."""
    table: dict[Cell, Outcome] = {}
    for (op, target), (dataset_id, versions) in CELLS.items():
        if op == "list":
            page = mcp.call("list_datasets", {"limit": 1000}).structured_content
            table[op, target] = _listed(dataset_id, [d["id"] for d in page["items"]])
            continue
        table[op, target] = outcome(mcp.call(*_tool_call(op, target, dataset_id, versions)))
    return table


def _listed(dataset_id: str, ids: list[str]) -> Outcome:
    return (OK, "") if dataset_id in ids else (NOT_FOUND, "not listed")


def _normalized(table: dict[Cell, Outcome], team: Team) -> dict[Cell, Outcome]:
    return {cell: (code, msg.replace(team.tag, "<tag>")) for cell, (code, msg) in table.items()}


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


def _live_bulk_versions(ctx: Context, team: Team) -> list[str]:
    root = accounts.in_workspace(ctx, team.ws)
    try:
        return sorted(v.version for v in svc.list_dataset_versions(root, "bulk"))
    except NotFound:
        return []


@pytest.mark.parametrize("role", ROLES)
def test_http_and_mcp_give_every_role_the_same_outcome_for_every_operation_and_workspace(
    role: str, ctx: Context, http: TestClient, server_url: str
) -> None:
    http_team, mcp_team = make_team(ctx, role), make_team(ctx, role)
    over_http = _normalized(http_walk(http, http_team.key), http_team)
    with mcp_http(server_url, mcp_team.key) as mcp:
        over_mcp = _normalized(mcp_walk(mcp), mcp_team)
    assert over_mcp == over_http
    assert {cell: code for cell, (code, _) in over_http.items()} == expected(role)
    survivors = [] if role == "admin" else ["1.0.0", "1.1.0"]
    assert _live_bulk_versions(ctx, http_team) == _live_bulk_versions(ctx, mcp_team) == survivors


def test_no_credentials_and_a_revoked_key_are_unauthenticated_on_both_transports(
    ctx: Context, http: TestClient, server_url: str
) -> None:
    team = make_team(ctx, "member")
    root = accounts.in_workspace(ctx, team.ws)
    [used] = [k for k in list_api_keys(root, all_users=True) if team.key.startswith(k.prefix)]
    revoke_api_key(root, used.id)
    for key in (None, team.key):
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        over_http = _http_outcome(http.get("/api/datasets", headers=headers))
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "list_datasets", "arguments": {}},
        }
        accept = {"accept": "application/json, text/event-stream"}
        answer = httpx.post(f"{server_url}/mcp", json=call, headers=headers | accept)
        assert answer.status_code == 401  # MCP over HTTP: a Bearer challenge, not a tool result
        assert answer.headers["www-authenticate"].startswith("Bearer")
        over_mcp = _http_outcome(answer)
        assert over_http[0] == "unauthenticated"
        assert over_mcp == over_http
