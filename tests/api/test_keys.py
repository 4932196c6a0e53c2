"""API key routes (SPEC C): the key is shown once, listed with last use, revoked keys are 401
on the next request; members manage their own keys, admins everyone's; on both backends."""

from __future__ import annotations

from fastapi.testclient import TestClient

from benchbook.services.context import Context
from benchbook.services.keys import create_api_key
from tests.api.people import bearer, error_code, login, other_workspace, person


def test_a_created_key_is_shown_once_works_records_its_use_and_is_401_once_revoked(
    client: TestClient, ctx: Context
) -> None:
    mia = person(ctx, "mia")
    created = client.post("/api/keys", json={"name": "ci", "scope": "read"}, headers=bearer(mia))
    assert created.status_code == 201
    key, info = created.json()["key"], created.json()["info"]
    assert key.startswith("bb_") and info["scope"] == "read" and info["last_used_at"] is None
    listed = client.get("/api/keys", headers=bearer(mia))
    assert key not in listed.text and "key_hash" not in listed.text
    assert client.get("/api/me", headers=bearer(key)).json()["role"] == "viewer"
    used = {k["id"]: k for k in client.get("/api/keys", headers=bearer(mia)).json()}
    assert used[info["id"]]["last_used_at"] is not None
    revoked = client.post(f"/api/keys/{info['id']}/revoke", headers=bearer(mia))
    assert revoked.status_code == 200 and revoked.json()["revoked_at"] is not None
    after = client.get("/api/datasets", headers=bearer(key))
    assert error_code(after) == (401, "unauthenticated")
    assert client.get("/api/datasets", headers=bearer(mia)).status_code == 200


def test_a_key_can_revoke_itself_and_then_stops_working(client: TestClient, ctx: Context) -> None:
    mia = person(ctx, "mia")
    own = client.get("/api/keys", headers=bearer(mia)).json()
    assert len(own) == 1
    assert client.post(f"/api/keys/{own[0]['id']}/revoke", headers=bearer(mia)).status_code == 200
    assert error_code(client.get("/api/keys", headers=bearer(mia))) == (401, "unauthenticated")


def test_members_manage_their_own_keys_and_admins_everyones(
    client: TestClient, ctx: Context
) -> None:
    mia, max_, ada = person(ctx, "mia"), person(ctx, "max"), person(ctx, "ada", "admin")
    max_id = client.get("/api/keys", headers=bearer(max_)).json()[0]["id"]
    denied = client.post(f"/api/keys/{max_id}/revoke", headers=bearer(mia))
    assert error_code(denied) == (403, "forbidden")
    for_other = client.post(
        "/api/keys", json={"name": "x", "user": "max@example.org"}, headers=bearer(mia)
    )
    assert error_code(for_other) == (403, "forbidden")
    assert error_code(client.get("/api/keys?all_users=true", headers=bearer(mia)))[0] == 403
    everyone = client.get("/api/keys", params={"all_users": True}, headers=bearer(ada)).json()
    assert {k["user_id"] for k in everyone} >= {
        client.get("/api/me", headers=bearer(k)).json()["user_id"] for k in (mia, max_, ada)
    }
    assert client.post(f"/api/keys/{max_id}/revoke", headers=bearer(ada)).status_code == 200
    assert error_code(client.get("/api/me", headers=bearer(max_))) == (401, "unauthenticated")
    made = client.post(
        "/api/keys", json={"name": "bot", "user": "mia@example.org"}, headers=bearer(ada)
    )
    assert made.status_code == 201
    assert client.get("/api/me", headers=bearer(made.json()["key"])).json()["role"] == "member"


def test_a_key_above_its_owners_role_is_400_and_another_workspaces_key_is_404(
    client: TestClient, ctx: Context
) -> None:
    vic, ada = person(ctx, "vic", "viewer"), person(ctx, "ada", "admin")
    above = client.post("/api/keys", json={"name": "w", "scope": "write"}, headers=bearer(vic))
    assert error_code(above) == (400, "invalid_input")
    assert above.json()["details"]["errors"][0]["path"] == "scope"
    assert client.post("/api/keys", json={"name": "r", "scope": "read"}, headers=bearer(vic))
    from benchbook.services import accounts
    from benchbook.services.keys import create_api_key

    there = other_workspace(ctx)
    accounts.add_member(there, "vic@example.org", "member")
    foreign = create_api_key(there, "elsewhere", "write", user="vic@example.org")
    response = client.post(f"/api/keys/{foreign.info.id}/revoke", headers=bearer(ada))
    assert error_code(response) == (404, "not_found")
    assert client.get("/api/me", headers=bearer(foreign.key)).json()["workspace"] == there.workspace


def test_a_session_cookie_creates_a_key_only_with_its_csrf_token(
    client: TestClient, ctx: Context
) -> None:
    person(ctx, "mia")
    csrf = login(client, "mia")
    assert error_code(client.post("/api/keys", json={"name": "web"})) == (403, "forbidden")
    wrong = client.post("/api/keys", json={"name": "web"}, headers={"X-CSRF-Token": csrf[::-1]})
    assert error_code(wrong) == (403, "forbidden")
    assert len(client.get("/api/keys").json()) == 1
    right = client.post("/api/keys", json={"name": "web"}, headers={"X-CSRF-Token": csrf})
    assert right.status_code == 201
    assert len(client.get("/api/keys").json()) == 2


def test_a_read_scoped_key_of_an_admin_cannot_mint_a_key_above_read(
    client: TestClient, ctx: Context
) -> None:
    person(ctx, "ada", "admin")
    read_key = create_api_key(ctx, "ro", "read", user="ada@example.org").key
    for scope in ("write", "admin"):
        minted = client.post(
            "/api/keys", json={"name": "up", "scope": scope}, headers=bearer(read_key)
        )
        assert error_code(minted) == (400, "invalid_input"), scope
        assert minted.json()["details"]["errors"][0]["path"] == "scope"
    same = client.post("/api/keys", json={"name": "ro2", "scope": "read"}, headers=bearer(read_key))
    assert same.status_code == 201
    assert client.get("/api/me", headers=bearer(same.json()["key"])).json()["role"] == "viewer"


def test_a_write_scoped_key_of_an_admin_cannot_mint_an_admin_key(
    client: TestClient, ctx: Context
) -> None:
    person(ctx, "ada", "admin")
    write_key = create_api_key(ctx, "rw", "write", user="ada@example.org").key
    minted = client.post(
        "/api/keys", json={"name": "up", "scope": "admin"}, headers=bearer(write_key)
    )
    assert error_code(minted) == (400, "invalid_input")
    assert "calling key" in minted.json()["message"]


def test_a_removed_member_keeps_no_key_even_after_being_added_again(
    client: TestClient, ctx: Context
) -> None:
    mia = person(ctx, "mia")
    ada = person(ctx, "ada", "admin")
    assert client.delete("/api/members/mia@example.org", headers=bearer(ada)).status_code == 204
    again = client.post("/api/members", json={"user": "mia@example.org"}, headers=bearer(ada))
    assert again.status_code == 201
    assert error_code(client.get("/api/me", headers=bearer(mia))) == (401, "unauthenticated")
    keys = client.get("/api/keys", params={"all_users": True}, headers=bearer(ada)).json()
    mias = [k for k in keys if k["name"] == "tests" and k["revoked_at"] is None]
    assert len(mias) == 1  # only ada's own key is live
