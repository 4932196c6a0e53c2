"""The login form over plain HTTP (TestClient, no browser): a pre-session CSRF token (login
CSRF), throttling of failed logins with 429 + ``Retry-After``, and nothing set on refusal."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from benchbook.app import create_app
from benchbook.services import accounts
from benchbook.services.context import Context
from benchbook.settings import Settings

PASSWORD = "correct-horse-battery"


@pytest.fixture
def client(engine: Engine, settings: Settings, ctx: Context) -> Iterator[TestClient]:
    """The whole app with one user, ``mia@example.org``, a member of ``default``."""
    accounts.create_user(ctx, "mia@example.org", "Mia", PASSWORD)
    accounts.add_member(ctx, "mia@example.org", "member")
    with TestClient(create_app(settings, engine), follow_redirects=False) as http:
        yield http


def _token(client: TestClient) -> str:
    page = client.get("/login")
    assert page.status_code == 200
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert found, "the login form carries a pre-session CSRF token"
    return found.group(1)


def _post(client: TestClient, password: str, csrf: str | None, **headers: str) -> object:
    form = {"email": "mia@example.org", "password": password, "next": "/"}
    if csrf is not None:
        form["csrf"] = csrf
    return client.post("/login", data=form, headers=headers)


def test_the_login_form_logs_in_with_its_pre_session_token(client: TestClient) -> None:
    response = _post(client, PASSWORD, _token(client))
    assert response.status_code == 303  # type: ignore[attr-defined]
    assert "benchbook_session" in response.cookies  # type: ignore[attr-defined]


def test_a_cross_site_login_post_without_the_pre_session_token_is_refused(
    client: TestClient,
) -> None:
    forged = _post(client, PASSWORD, None, origin="https://evil.example")
    assert forged.status_code == 403  # type: ignore[attr-defined]
    assert "benchbook_session" not in forged.cookies  # type: ignore[attr-defined]
    token = _token(client)
    client.cookies.clear()  # the attacker's page cannot send the victim's pre-session cookie
    replayed = _post(client, PASSWORD, token)
    assert replayed.status_code == 403  # type: ignore[attr-defined]
    assert "benchbook_session" not in replayed.cookies  # type: ignore[attr-defined]


def test_failed_logins_on_the_form_are_throttled_with_429_and_retry_after(
    client: TestClient,
) -> None:
    token = _token(client)
    statuses = [_post(client, "wrong-password", token).status_code for _ in range(6)]  # type: ignore[attr-defined]
    assert statuses == [401] * 5 + [429]
    throttled = _post(client, PASSWORD, token)
    assert throttled.status_code == 429  # type: ignore[attr-defined]
    assert int(throttled.headers["retry-after"]) >= 1  # type: ignore[attr-defined]
    assert "try again in" in throttled.text  # type: ignore[attr-defined]
