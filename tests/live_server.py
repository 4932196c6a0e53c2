"""A real ``benchbook serve`` subprocess on a free port with its own database (SQLite file or a
fresh PostgreSQL database), shared by the web tests (tests/web) and the client tests
(tests/client). Users: ``admin@example.org`` (admin of ``default``) and ``viewer@example.org``
(viewer), both with password :data:`PASSWORD`.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine, text

from benchbook.services import accounts
from benchbook.services.context import local_admin_context
from benchbook.settings import Settings
from benchbook.store.engine import make_engine, migrate, normalize_url
from tests.conftest import PG_URL, _need

PASSWORD = "correct horse battery"


@dataclass
class Server:
    """A running server: its base URL and backend name."""

    url: str
    backend: str


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def fresh_database(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a fresh SQLite file, or of a fresh PostgreSQL database dropped after."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('web') / 'benchbook.db'}"
        return
    if not PG_URL:
        _need("BENCHBOOK_TEST_DATABASE_URL is not set; PostgreSQL tests skipped")
    admin = create_engine(normalize_url(PG_URL), isolation_level="AUTOCOMMIT")
    name = f"bb_web_{uuid.uuid4().hex[:10]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield normalize_url(PG_URL).rsplit("/", 1)[0] + "/" + name
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def web_database(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str]]:
    """``(backend, url)``: a fresh SQLite file, or a fresh PostgreSQL database dropped after."""
    with fresh_database(request.param, tmp_path_factory) as url:
        yield request.param, url


def _seed_users(url: str, home: Path) -> None:
    engine = make_engine(url)
    migrate(engine)
    ctx = local_admin_context(engine, Settings(home=home, database_url=url))
    for email, name, role in (
        ("admin@example.org", "Ada Admin", "admin"),
        ("viewer@example.org", "Vic Viewer", "viewer"),
    ):
        accounts.create_user(ctx, email, name, PASSWORD)
        accounts.add_member(ctx, email, role)
    engine.dispose()


@contextmanager
def serve(
    web_database: tuple[str, str], home: Path, env_extra: dict[str, str] | None = None
) -> Iterator[Server]:
    """Seed the users, run ``benchbook serve`` as a subprocess on a free port, stop it after.
    ``env_extra`` overrides the environment (e.g. ``HF_ENDPOINT``)."""
    backend, url = web_database
    _seed_users(url, home)
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "BENCHBOOK_HOME": str(home),
        "BENCHBOOK_SECRET_KEY": "web-tests-" + uuid.uuid4().hex,
        "HF_ENDPOINT": "http://127.0.0.1:9",
        **(env_extra or {}),
    }
    env.pop("HF_TOKEN", None)
    cmd = [str(Path(sys.executable).parent / "benchbook"), "serve", "--port", str(port)]
    log = (home / "server.log").open("w")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90  # a loaded 2-core machine under xdist
    while True:
        try:
            if httpx.get(base + "/api/health", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail("server did not start:\n" + (home / "server.log").read_text())
        time.sleep(0.1)
    try:
        yield Server(url=base, backend=backend)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
