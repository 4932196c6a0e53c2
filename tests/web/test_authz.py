"""The dashboard asks the services what the caller may do (issue 9 item 6): a control is shown
exactly when the service would allow the action."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from benchbook.app import create_app
from benchbook.errors import Forbidden
from benchbook.services import accounts, comments, datasets
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


def test_a_comment_author_demoted_to_viewer_sees_no_delete_control_the_service_refuses(
    client: TestClient, engine: Engine, settings: Settings, ctx: Context
) -> None:
    accounts.create_user(ctx, "ola@example.org", "Ola", PASSWORD)
    accounts.add_member(ctx, "ola@example.org", "member")
    datasets.register_dataset(ctx, datasets.parse_dataset({"id": "x", "version": "1.0.0"}))
    ola = Context(authenticate_password(engine, "ola@example.org", PASSWORD), engine, settings)
    comment = comments.create_comment(ola, "dataset", "x", "first!")
    _log_in(client, "ola@example.org")
    assert "Delete comment" in client.get("/datasets/x").text
    accounts.set_member_role(ctx, "ola@example.org", "viewer")
    ola = Context(authenticate_password(engine, "ola@example.org", PASSWORD), engine, settings)
    with pytest.raises(Forbidden):
        comments.delete_comment(ola, comment.id)
    page = client.get("/datasets/x")
    assert page.status_code == 200
    assert "first!" in page.text
    assert "Delete comment" not in page.text


@pytest.mark.parametrize("path", ["/register", "/import"])
def test_a_viewer_is_refused_the_pages_that_lead_only_to_writes(
    client: TestClient, ctx: Context, path: str
) -> None:
    accounts.create_user(ctx, "vic@example.org", "Vic", PASSWORD)
    accounts.add_member(ctx, "vic@example.org", "viewer")
    _log_in(client, "vic@example.org")
    assert client.get(path).status_code == 403
    listing = client.get("/").text
    assert 'href="/import"' not in listing and 'href="/register"' not in listing
    upload = client.post(
        "/import/uploads",
        files={"file": ("a.jsonl", b"{}\n")},
        headers={"X-CSRF-Token": _csrf(client)},
    )
    assert upload.status_code == 403


def _csrf(client: TestClient) -> str:
    token = re.search(r'name="csrf" value="([^"]+)"', client.get("/account").text)
    assert token
    return token.group(1)


def test_the_dashboard_never_authorizes_on_its_own() -> None:
    """Grep-style, in addition to the behaviour above: pages ask ``services.controls``."""
    web = Path(__file__).resolve().parents[2] / "src" / "benchbook" / "web"
    offenders = [
        f"{path.name}:{number}"
        for path in sorted(web.rglob("*"))
        if path.suffix in {".py", ".html"}
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\.require\(|\.allows\(|page\.can\(|role_allows", line)
    ]
    assert offenders == []
