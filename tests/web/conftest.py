"""A real ``benchbook serve`` on a free port with its own database, users, and a headless
Chromium (Debian's ``/usr/bin/chromium``, never a downloaded browser) driven by Playwright.

Users: ``admin@example.org`` (admin of ``default``) and ``viewer@example.org`` (viewer), both
with password :data:`PASSWORD`. Screenshots go to ``artifacts/screenshots/`` (git-ignored).
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
from tests.conftest import PG_URL, _need, import_or_need

playwright_sync = import_or_need("playwright.sync_api")

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PASSWORD = "correct horse battery"
SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"


@dataclass
class Server:
    """A running server: its base URL and backend name."""

    url: str
    backend: str


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def web_database(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str]]:
    """``(backend, url)``: a fresh SQLite file, or a fresh PostgreSQL database dropped after."""
    if request.param == "sqlite":
        yield "sqlite", f"sqlite:///{tmp_path_factory.mktemp('web') / 'benchbook.db'}"
        return
    if not PG_URL:
        _need("BENCHBOOK_TEST_DATABASE_URL is not set; PostgreSQL tests skipped")
    admin = create_engine(normalize_url(PG_URL), isolation_level="AUTOCOMMIT")
    name = f"bb_web_{uuid.uuid4().hex[:10]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    yield "postgresql", normalize_url(PG_URL).rsplit("/", 1)[0] + "/" + name
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


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


@pytest.fixture(scope="module")
def server(
    web_database: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """``benchbook serve`` as a subprocess on a free port, stopped after the module."""
    with serve(web_database, tmp_path_factory.mktemp("home")) as running:
        yield running


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Headless Debian Chromium (skip locally when missing; CI installs it). Per module:
    Playwright's sync API keeps an event loop running in the main thread while it is open,
    which must not reach the next module's tests (under xdist any module may follow)."""
    if not Path(CHROMIUM).exists():
        _need(f"{CHROMIUM} not found")
    with playwright_sync.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def new_page(browser: object, server: Server) -> Iterator[object]:
    """A factory for pages in fresh 1280×800 contexts; every context is closed after the test.
    Requests to any host but the server are recorded in ``page.external``."""
    contexts = []

    def make(color_scheme: str = "light") -> object:
        context = browser.new_context(  # type: ignore[attr-defined]
            viewport={"width": 1280, "height": 800}, base_url=server.url, color_scheme=color_scheme
        )
        contexts.append(context)
        page = context.new_page()
        page.external = []
        page.on(
            "request",
            lambda r: None if r.url.startswith(server.url) else page.external.append(r.url),
        )
        return page

    yield make
    for context in contexts:
        context.close()


def log_in(page: object, email: str) -> None:
    """Log in through the form and wait for the datasets list."""
    page.goto("/login")  # type: ignore[attr-defined]
    page.fill("#email", email)  # type: ignore[attr-defined]
    page.fill("#password", PASSWORD)  # type: ignore[attr-defined]
    page.click("button[type=submit]")  # type: ignore[attr-defined]
    page.wait_for_url("**/datasets")  # type: ignore[attr-defined]


def shot(page: object, server: Server, name: str) -> None:
    """Save a 1280×800 screenshot as ``artifacts/screenshots/<backend>-<name>.png``."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{server.backend}-{name}.png"))  # type: ignore[attr-defined]
