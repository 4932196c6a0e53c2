"""The dashboard asks the services what the caller may do (issue 9 item 6): a control is shown
exactly when the service would allow the action."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from benchbook.api.app import create_app
from benchbook.services import accounts, datasets
from benchbook.services.auth import authenticate_password
from benchbook.services.context import Context
from benchbook.settings import Settings

PASSWORD = "correct-horse-battery"


@pytest.fixture
def client(engine: Engine, settings: Settings) -> Iterator[TestClient]:
    """The whole app, no redirects followed."""
    with TestClient(create_app(settings, engine), follow_redirects=False) as http:
        yield http


def _log_in(client: TestClient, email: str) -> None:
    token = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text)
    assert token
    form = {"email": email, "password": PASSWORD, "csrf": token.group(1), "next": "/"}
    assert client.post("/login", data=form).status_code == 303


def test_a_creator_demoted_to_viewer_sees_no_delete_control(
    client: TestClient, engine: Engine, settings: Settings, ctx: Context
) -> None:
    accounts.create_user(ctx, "mia@example.org", "Mia", PASSWORD)
    accounts.add_member(ctx, "mia@example.org", "member")
    mia = Context(authenticate_password(engine, "mia@example.org", PASSWORD), engine, settings)
    payload = {"id": "x", "version": "1.0.0", "cases": []}
    datasets.register_dataset(mia, datasets.parse_dataset(payload))
    _log_in(client, "mia@example.org")
    assert "Delete versions" in client.get("/datasets/x").text
    accounts.set_member_role(ctx, "mia@example.org", "viewer")
    page = client.get("/datasets/x")
    assert page.status_code == 200
    assert "Delete versions" not in page.text
