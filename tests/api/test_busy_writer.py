"""SQLite during a long import (issue 9 item 13): while another writer holds the database, a
request that must write is refused with 503 and ``Retry-After`` once the short busy timeout
passes (never a 500 ``database is locked``), and reads answer at once."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from benchbook.app import create_app
from benchbook.errors import Unavailable
from benchbook.services import accounts, comments, datasets
from benchbook.services.auth import authenticate_password, start_session
from benchbook.services.context import local_admin_context, open_engine
from benchbook.settings import Settings

PASSWORD = "correct-horse-battery"


#: The busy timeout of tests that expect a refusal (short: each refusal waits it out once).
REFUSAL_TIMEOUT_S = 0.3
#: The busy timeout of tests that expect no wait at all: long, so "answered before the timeout"
#: separates "never waited for the writer" from "waited" however loaded the machine is.
AT_ONCE_TIMEOUT_S = 5.0


@pytest.fixture
def busy_timeout_s(request: pytest.FixtureRequest) -> float:
    """``REFUSAL_TIMEOUT_S`` unless the test is marked ``at_once``."""
    return AT_ONCE_TIMEOUT_S if request.node.get_closest_marker("at_once") else REFUSAL_TIMEOUT_S


@pytest.fixture
def settings_busy(tmp_path: Path, busy_timeout_s: float) -> Settings:
    """SQLite with a short busy timeout (the test holds the writer)."""
    db = tmp_path / "busy.db"
    return Settings(
        home=tmp_path / "home",
        database_url=f"sqlite:///{db}",
        sqlite_busy_timeout_s=busy_timeout_s,
    )


@contextmanager
def writer_held(settings: Settings) -> Iterator[None]:
    """Another process's long write (an import) holding SQLite's single writer."""
    url = settings.resolved_database_url()
    holder = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


@pytest.fixture
def client(settings_busy: Settings) -> Iterator[TestClient]:
    engine = open_engine(settings_busy)
    admin = local_admin_context(engine, settings_busy)
    accounts.create_user(admin, "ada@example.org", "Ada", PASSWORD)
    accounts.add_member(admin, "ada@example.org", "member")
    datasets.register_dataset(admin, datasets.parse_dataset({"id": "x", "version": "1.0.0"}))
    with TestClient(create_app(settings_busy, engine), follow_redirects=False) as http:
        yield http


def test_a_login_while_the_writer_is_held_is_503_with_retry_after(
    client: TestClient, settings_busy: Settings
) -> None:
    with writer_held(settings_busy):
        started = time.monotonic()
        answer = client.post("/api/login", json={"email": "ada@example.org", "password": PASSWORD})
        elapsed = time.monotonic() - started
    assert answer.status_code == 503, answer.text
    assert answer.json()["code"] == "unavailable"
    assert int(answer.headers["Retry-After"]) >= 1
    assert elapsed < 5
    assert (
        client.post(
            "/api/login", json={"email": "ada@example.org", "password": PASSWORD}
        ).status_code
        == 200
    )


@pytest.mark.at_once
def test_reads_of_a_logged_in_member_answer_at_once_while_the_writer_is_held(
    client: TestClient, settings_busy: Settings
) -> None:
    client.post("/api/login", json={"email": "ada@example.org", "password": PASSWORD})
    with writer_held(settings_busy):
        started = time.monotonic()
        assert client.get("/api/datasets").status_code == 200
        assert client.get("/api/datasets/x/versions").status_code == 200
        elapsed = time.monotonic() - started
    assert elapsed < AT_ONCE_TIMEOUT_S, f"reads waited {elapsed:.1f} s for the writer"


def test_a_comment_is_503_while_the_writer_is_held(
    client: TestClient, settings_busy: Settings
) -> None:
    login = client.post("/api/login", json={"email": "ada@example.org", "password": PASSWORD})
    csrf = {"X-CSRF-Token": login.json()["csrf_token"]}
    with writer_held(settings_busy):
        body = {"resource_type": "dataset", "resource_id": "x", "body": "hello"}
        refused = client.post("/api/comments", json=body, headers=csrf)
        assert refused.status_code == 503, refused.text
        assert "Retry-After" in refused.headers
        page = client.post(
            "/datasets/x/comments", data={"body": "hello", "csrf": csrf["X-CSRF-Token"]}
        )
        assert page.status_code == 503
        assert "Retry-After" in page.headers
    assert client.post("/api/comments", json=body, headers=csrf).status_code == 201


def test_the_service_raises_unavailable_not_operational_error(settings_busy: Settings) -> None:
    engine = open_engine(settings_busy)
    admin = local_admin_context(engine, settings_busy)
    datasets.register_dataset(admin, datasets.parse_dataset({"id": "x", "version": "1.0.0"}))
    with writer_held(settings_busy), pytest.raises(Unavailable) as caught:
        comments.create_comment(admin, "dataset", "x", "hello")
    assert caught.value.retry_after_s >= 1
    engine.dispose()


@pytest.mark.at_once
def test_an_expired_session_is_401_at_once_while_the_writer_is_held(
    client: TestClient, settings_busy: Settings
) -> None:
    engine = client.app.state.engine  # type: ignore[attr-defined]
    ada = authenticate_password(engine, "ada@example.org", PASSWORD)
    token = start_session(engine, ada, ttl=timedelta(seconds=-1))
    client.cookies.set("benchbook_session", token)
    with writer_held(settings_busy):
        started = time.monotonic()
        answer = client.get("/api/me")
        elapsed = time.monotonic() - started
    assert answer.status_code == 401, answer.text
    assert elapsed < AT_ONCE_TIMEOUT_S, f"an expired session waited {elapsed:.1f} s for the writer"
