"""HTTP authentication (SPEC C): API keys, session cookies with CSRF, 401 without credentials.

Users and keys are made through the services on the same database the app serves.
"""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from benchbook.services import accounts
from benchbook.services.context import Context
from benchbook.services.keys import create_api_key, revoke_api_key
from tests.api.conftest import dataset_body

PASSWORD = "member-password"


def _member(ctx: Context, email: str = "mia@example.org", role: str = "member") -> str:
    accounts.create_user(ctx, email, "Mia", PASSWORD)
    accounts.add_member(ctx, email, role)  # type: ignore[arg-type]
    return email


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_before_any_user_exists_the_server_acts_as_the_local_admin(client: TestClient) -> None:
    me = client.get("/api/me")
    assert me.status_code == 200
    assert (me.json()["user_id"], me.json()["role"]) == ("local-admin", "admin")


def test_once_users_exist_a_request_without_credentials_is_401(
    client: TestClient, ctx: Context
) -> None:
    _member(ctx)
    for response in (client.get("/api/datasets"), client.post("/api/datasets", json={})):
        assert response.status_code == 401
        assert response.json()["code"] == "unauthenticated"
    assert client.get("/api/health").status_code == 200


def test_an_api_key_acts_with_its_scope_and_a_revoked_key_is_401(
    client: TestClient, ctx: Context
) -> None:
    email = _member(ctx)
    writer = create_api_key(ctx, "ci", "write", user=email)
    reader = create_api_key(ctx, "dash", "read", user=email)
    created = client.post("/api/datasets", json=dataset_body(), headers=_bearer(writer.key))
    assert created.status_code == 201
    denied = client.post(
        "/api/datasets", json=dataset_body(version="2.0.0"), headers=_bearer(reader.key)
    )
    assert denied.status_code == 403
    assert (
        client.get("/api/datasets/arith/versions", headers=_bearer(reader.key)).json()[0]["version"]
        == "1.0.0"
    )
    revoke_api_key(ctx, writer.info.id)
    again = client.get("/api/datasets", headers=_bearer(writer.key))
    assert again.status_code == 401 and again.json()["code"] == "unauthenticated"


def test_malformed_authorization_headers_are_401(client: TestClient, ctx: Context) -> None:
    _member(ctx)
    for header in ("Basic dXNlcjpwYXNz", "Bearer", "Bearer bb_nope", "Bearer sk-123"):
        assert client.get("/api/datasets", headers={"Authorization": header}).status_code == 401


def test_a_session_cookie_write_needs_the_csrf_token(client: TestClient, ctx: Context) -> None:
    email = _member(ctx)
    login = client.post("/api/login", json={"email": email, "password": PASSWORD})
    assert login.status_code == 200
    assert "httponly" in login.headers["set-cookie"].lower()
    csrf = login.json()["csrf_token"]
    assert client.get("/api/me").json()["role"] == "member"
    cross_site = client.post("/api/datasets", json=dataset_body())
    assert cross_site.status_code == 403
    assert client.get("/api/datasets").json()["total"] == 0
    forged = client.post("/api/datasets", json=dataset_body(), headers={"X-CSRF-Token": "0" * 64})
    assert forged.status_code == 403
    ok = client.post("/api/datasets", json=dataset_body(), headers={"X-CSRF-Token": csrf})
    assert ok.status_code == 201
    assert client.post("/api/logout").status_code == 204
    assert client.get("/api/me").status_code == 401


def test_a_wrong_password_is_401_and_sets_no_cookie(client: TestClient, ctx: Context) -> None:
    email = _member(ctx)
    response = client.post("/api/login", json={"email": email, "password": "wrong-password"})
    assert response.status_code == 401
    assert "set-cookie" not in response.headers


def _login(client: TestClient, email: str, password: str) -> Any:
    return client.post("/api/login", json={"email": email, "password": password})


def test_failed_logins_for_one_account_are_throttled_with_429_and_retry_after(
    client: TestClient, ctx: Context
) -> None:
    email = _member(ctx)
    statuses = [_login(client, email, "wrong-password").status_code for _ in range(6)]
    assert statuses == [401] * 5 + [429]
    throttled = _login(client, email, PASSWORD)  # even the right password waits
    assert throttled.status_code == 429 and throttled.json()["code"] == "too_many_requests"
    assert 1 <= int(throttled.headers["retry-after"]) <= 300
    assert "email" in throttled.json()["message"] or "account" in throttled.json()["message"]
    other = _member(ctx, "max@example.org")
    assert _login(client, other, PASSWORD).status_code == 200  # other accounts are unaffected


def test_failed_logins_from_one_client_address_are_throttled_across_accounts(
    client: TestClient, ctx: Context
) -> None:
    _member(ctx)
    statuses = [
        _login(client, f"nobody{i}@example.org", "wrong-password").status_code for i in range(21)
    ]
    assert statuses[:20] == [401] * 20 and statuses[20] == 429
    assert "address" in _login(client, "mia@example.org", PASSWORD).json()["message"]
