"""Secret routes (SPEC C): write-only values — no response ever carries one —, user scope for
any member, workspace scope for admins; on both backends."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from benchbook.api.secrets import SECRET_BODY_BYTES
from benchbook.services.context import Context
from benchbook.services.secrets import resolve_secret
from tests.api.people import bearer, error_code, person

VALUE = "hf_s3cr3t-value-that-must-never-leak"


def _seen(responses: list[Any]) -> str:
    return "\n".join(r.text + str(dict(r.headers)) for r in responses)


def test_secrets_are_listed_by_name_and_no_response_ever_carries_a_value(
    client: TestClient, ctx: Context
) -> None:
    ada, mia = person(ctx, "ada", "admin"), person(ctx, "mia")
    responses = [
        client.put("/api/secrets/user/HF_TOKEN", json={"value": VALUE}, headers=bearer(mia)),
        client.put("/api/secrets/workspace/HF_TOKEN", json={"value": VALUE}, headers=bearer(ada)),
        client.put("/api/secrets/user/OPENAI_KEY", json={"value": VALUE}, headers=bearer(ada)),
    ]
    assert [r.status_code for r in responses] == [200, 200, 200]
    assert responses[0].json()["name"] == "HF_TOKEN"
    assert responses[0].json()["scope"] == "user"
    listed = client.get("/api/secrets", headers=bearer(ada))
    assert sorted((s["scope"], s["name"]) for s in listed.json()) == [
        ("user", "OPENAI_KEY"),
        ("workspace", "HF_TOKEN"),
    ]
    keys = {"name", "scope", "updated_by", "updated_at", "hosts"}
    assert all(set(s) == keys and s["hosts"] == [] for s in listed.json())
    mine = client.get("/api/secrets", headers=bearer(mia))
    assert [(s["scope"], s["name"]) for s in mine.json()] == [("user", "HF_TOKEN")]
    one_scope = client.get("/api/secrets", params={"scope": "workspace"}, headers=bearer(ada))
    responses += [listed, mine, one_scope, client.get("/api/openapi.json")]
    responses.append(client.delete("/api/secrets/user/HF_TOKEN", headers=bearer(mia)))
    assert responses[-1].status_code == 204
    assert VALUE not in _seen(responses)


def test_a_member_keeps_user_secrets_but_workspace_secrets_are_for_admins(
    client: TestClient, ctx: Context
) -> None:
    mia, vic = person(ctx, "mia"), person(ctx, "vic", "viewer")
    denied = client.put("/api/secrets/workspace/HF_TOKEN", json={"value": "x"}, headers=bearer(mia))
    assert error_code(denied) == (403, "forbidden")
    scoped = client.get("/api/secrets", params={"scope": "workspace"}, headers=bearer(mia))
    assert error_code(scoped) == (403, "forbidden")
    own = client.put("/api/secrets/user/HF_TOKEN", json={"value": "v-own"}, headers=bearer(vic))
    assert own.status_code == 200
    assert client.get("/api/secrets", headers=bearer(mia)).json() == []


def test_the_requesters_own_secret_wins_over_the_workspaces(
    client: TestClient, ctx: Context
) -> None:
    from benchbook.services.auth import authenticate_api_key

    ada, mia = person(ctx, "ada", "admin"), person(ctx, "mia")
    client.put("/api/secrets/workspace/HF_TOKEN", json={"value": "team"}, headers=bearer(ada))
    as_mia = Context(authenticate_api_key(ctx.engine, mia), ctx.engine, ctx.settings)
    assert resolve_secret(as_mia, "HF_TOKEN") == "team"
    client.put("/api/secrets/user/HF_TOKEN", json={"value": "mine"}, headers=bearer(mia))
    assert resolve_secret(as_mia, "HF_TOKEN") == "mine"


def test_bad_secret_names_values_and_scopes_are_400_and_missing_ones_404(
    client: TestClient, ctx: Context
) -> None:
    mia = person(ctx, "mia")
    bad_name = client.put("/api/secrets/user/9lives", json={"value": "x"}, headers=bearer(mia))
    assert error_code(bad_name) == (400, "invalid_input")
    empty = client.put("/api/secrets/user/HF_TOKEN", json={"value": ""}, headers=bearer(mia))
    assert empty.json()["details"]["errors"][0]["path"] == "value"
    scope = client.put("/api/secrets/team/HF_TOKEN", json={"value": "x"}, headers=bearer(mia))
    assert error_code(scope) == (400, "invalid_input")
    missing = client.delete("/api/secrets/user/NOPE", headers=bearer(mia))
    assert error_code(missing) == (404, "not_found")
    assert client.get("/api/secrets", headers=bearer(mia)).json() == []


def test_a_secret_request_over_its_limit_is_413(client: TestClient, ctx: Context) -> None:
    mia = person(ctx, "mia")
    huge = {"value": "x" * SECRET_BODY_BYTES}
    response = client.put("/api/secrets/user/BIG", json=huge, headers=bearer(mia))
    assert error_code(response) == (413, "payload_too_large")
    assert client.get("/api/secrets", headers=bearer(mia)).json() == []
