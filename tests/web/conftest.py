"""A real ``benchbook serve`` on a free port with its own database, users, and a headless
Chromium (Debian's ``/usr/bin/chromium``, never a downloaded browser) driven by Playwright.

Users: ``admin@example.org`` (admin of ``default``) and ``viewer@example.org`` (viewer), both
with password :data:`PASSWORD`. Screenshots go to ``artifacts/screenshots/`` (git-ignored).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import _need, import_or_need
from tests.live_server import PASSWORD, Server, serve, web_database

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
__all__ = ["PASSWORD", "Server", "serve", "web_database"]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"


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
