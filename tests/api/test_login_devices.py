"""Issue 27: a stranger's wrong passwords locked the account for everyone, its owner too, for as
long as the stranger kept going. Now a client that logged in as that email before (its device
cookie, OWASP "device cookies") is counted on its own: the stranger is throttled, the owner is
not — over the API and the login form. A device still has its own bound, and a cookie proves
nothing for another email or once tampered with."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from benchbook.services import accounts
from benchbook.services.context import Context

PASSWORD = "member-password"
EMAIL = "mia@example.org"


def _member(ctx: Context, email: str = EMAIL) -> None:
    accounts.create_user(ctx, email, "Mia", PASSWORD)
    accounts.add_member(ctx, email, "member")


def _login(http: TestClient, password: str, email: str = EMAIL) -> int:
    return http.post("/api/login", json={"email": email, "password": password}).status_code


def _lock_out(stranger: TestClient) -> None:
    statuses = [_login(stranger, "guess-1234") for _ in range(6)]
    assert statuses == [401] * 5 + [429]
    assert _login(stranger, PASSWORD) == 429  # the stranger's client is locked out


def test_a_stranger_cannot_lock_out_a_client_that_logged_in_before(
    client: TestClient, ctx: Context
) -> None:
    _member(ctx)
    assert _login(client, PASSWORD) == 200
    assert "benchbook_device" in client.cookies
    with TestClient(client.app) as stranger:
        _lock_out(stranger)
    assert _login(client, PASSWORD) == 200  # the owner's device keeps logging in
    assert _login(client, "typo-password") == 401  # and may mistype


def test_a_device_has_its_own_bound_then_counts_as_an_unknown_client(
    client: TestClient, ctx: Context
) -> None:
    _member(ctx)
    assert _login(client, PASSWORD) == 200
    statuses = [_login(client, "wrong-password") for _ in range(11)]
    # 5 on the device, then 5 on the account like any client, then 429
    assert statuses == [401] * 10 + [429]


def test_a_device_cookie_proves_nothing_for_another_email_or_once_altered(
    client: TestClient, ctx: Context
) -> None:
    _member(ctx)
    _member(ctx, "max@example.org")
    assert _login(client, PASSWORD, "max@example.org") == 200  # a device of max, not of mia
    with TestClient(client.app) as stranger:
        _lock_out(stranger)
    assert _login(client, PASSWORD) == 429
    with TestClient(client.app) as other:
        payload, _, mac = client.cookies["benchbook_device"].rpartition(".")
        forged = payload.replace(payload.split(".")[0], "bWlhQGV4YW1wbGUub3Jn") + "." + mac
        other.cookies.set("benchbook_device", forged)  # mia's name under max's signature
        assert _login(other, PASSWORD) == 429


def test_the_login_form_hands_out_and_honours_the_device_cookie(
    client: TestClient, ctx: Context
) -> None:
    _member(ctx)

    def form_login(http: TestClient, password: str) -> int:
        page = http.get("/login")
        found = re.search(r'name="csrf" value="([^"]+)"', page.text)
        assert found
        form = {"email": EMAIL, "password": password, "next": "/", "csrf": found.group(1)}
        return http.post("/login", data=form, follow_redirects=False).status_code

    assert form_login(client, PASSWORD) == 303
    assert "benchbook_device" in client.cookies
    with TestClient(client.app) as stranger:
        assert [form_login(stranger, "guess-5678") for _ in range(6)] == [401] * 5 + [429]
    client.cookies.delete("benchbook_session")
    assert form_login(client, PASSWORD) == 303
