"""Member, user and workspace routes (SPEC C): admins manage members, a workspace keeps an
admin, removed members lose access at once, installation admins create users and workspaces;
on both backends."""

from __future__ import annotations

import uuid

from fastapi.testclient import TestClient

from benchbook.services import accounts
from benchbook.services.context import Context
from tests.api.people import bearer, error_code, other_workspace, person


def _roles(client: TestClient, key: str) -> dict[str, str]:
    response = client.get("/api/members", headers=bearer(key))
    assert response.status_code == 200, response.text
    return {m["email"]: m["role"] for m in response.json()}


def test_an_admin_adds_promotes_and_removes_a_member_who_then_loses_access(
    client: TestClient, ctx: Context
) -> None:
    ada = person(ctx, "ada", "admin")
    accounts.create_user(ctx, "new@example.org", "New")
    added = client.post(
        "/api/members", json={"user": "new@example.org", "role": "viewer"}, headers=bearer(ada)
    )
    assert added.status_code == 201 and added.json()["role"] == "viewer"
    again = client.post("/api/members", json={"user": "new@example.org"}, headers=bearer(ada))
    assert error_code(again) == (409, "conflict")
    mia = person(ctx, "mia")
    promoted = client.put(
        "/api/members/mia@example.org/role", json={"role": "admin"}, headers=bearer(ada)
    )
    assert promoted.json()["role"] == "admin"
    assert _roles(client, mia)["new@example.org"] == "viewer"
    assert client.delete("/api/members/mia@example.org", headers=bearer(ada)).status_code == 204
    assert error_code(client.get("/api/members", headers=bearer(mia))) == (401, "unauthenticated")
    assert "mia@example.org" not in _roles(client, ada)


def test_viewers_and_members_list_members_but_every_change_is_403(
    client: TestClient, ctx: Context
) -> None:
    vic, mia = person(ctx, "vic", "viewer"), person(ctx, "mia")
    for key in (vic, mia):
        assert set(_roles(client, key)) == {"vic@example.org", "mia@example.org"}
        writes = [
            client.post("/api/members", json={"user": "vic@example.org"}, headers=bearer(key)),
            client.put(
                "/api/members/vic@example.org/role", json={"role": "admin"}, headers=bearer(key)
            ),
            client.delete("/api/members/vic@example.org", headers=bearer(key)),
        ]
        assert [error_code(r) for r in writes] == [(403, "forbidden")] * 3
    assert _roles(client, vic) == {"vic@example.org": "viewer", "mia@example.org": "member"}


def test_the_last_admin_cannot_be_demoted_or_removed(client: TestClient, ctx: Context) -> None:
    solo = f"solo-{uuid.uuid4().hex[:8]}"
    accounts.create_workspace(ctx, solo)
    root = accounts.in_workspace(ctx, solo)
    ada = person(root, "ada", "admin")
    demote = client.put(
        "/api/members/ada@example.org/role", json={"role": "member"}, headers=bearer(ada)
    )
    assert error_code(demote) == (409, "conflict")
    assert error_code(client.delete("/api/members/ada@example.org", headers=bearer(ada)))[0] == 409
    assert _roles(client, ada) == {"ada@example.org": "admin"}


def test_a_member_of_another_workspace_is_404_here(client: TestClient, ctx: Context) -> None:
    ada = person(ctx, "ada", "admin")
    there = other_workspace(ctx)
    accounts.create_user(ctx, "oli@example.org", "Oli")
    accounts.add_member(there, "oli@example.org", "member")
    role = client.put(
        "/api/members/oli@example.org/role", json={"role": "viewer"}, headers=bearer(ada)
    )
    assert error_code(role) == (404, "not_found")
    assert error_code(client.delete("/api/members/oli@example.org", headers=bearer(ada)))[0] == 404
    assert "oli@example.org" not in _roles(client, ada)
    assert [w["id"] for w in client.get("/api/workspaces", headers=bearer(ada)).json()] == [
        "default"
    ]


def test_only_installation_admins_create_users_and_workspaces(
    client: TestClient, ctx: Context
) -> None:
    ada, root = person(ctx, "ada", "admin"), person(ctx, "root", "admin", admin=True)
    user = {"email": "zoe@example.org", "display_name": "Zoe", "password": "long-enough-pw"}
    assert error_code(client.post("/api/users", json=user, headers=bearer(ada))) == (
        403,
        "forbidden",
    )
    assert error_code(client.get("/api/users", headers=bearer(ada)))[0] == 403
    made = client.post("/api/users", json=user, headers=bearer(root))
    assert made.status_code == 201 and "password" not in made.text
    assert error_code(client.post("/api/users", json=user, headers=bearer(root)))[0] == 409
    short = client.post(
        "/api/users",
        json={**user, "email": "z2@example.org", "password": "short"},
        headers=bearer(root),
    )
    assert short.json()["details"]["errors"][0]["path"] == "password"
    emails = [u["email"] for u in client.get("/api/users", headers=bearer(root)).json()]
    assert "zoe@example.org" in emails and "z2@example.org" not in emails
    space = {"id": f"lab-{uuid.uuid4().hex[:8]}", "name": "The lab"}
    assert error_code(client.post("/api/workspaces", json=space, headers=bearer(ada)))[0] == 403
    assert client.post("/api/workspaces", json=space, headers=bearer(root)).status_code == 201
    bad = client.post("/api/workspaces", json={"id": "_shared"}, headers=bearer(root))
    assert error_code(bad) == (400, "invalid_input")
    assert space["id"] in [
        w["id"] for w in client.get("/api/workspaces", headers=bearer(root)).json()
    ]
