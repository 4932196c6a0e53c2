"""Browser egress (issue 27 item 3): a browser case opens only the installation's allowed
hosts — checked after DNS resolution and enforced inside Chromium, not only on the URL."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from benchbook.contracts.dataset import BrowserEnv
from benchbook.contracts.harness import PythonHarness
from benchbook.contracts.run import CaseInput
from benchbook.runtime import RuntimeConfig
from benchbook.runtime.environments.egress import (
    EgressError,
    check_url,
    parse_entry,
    resolve_allowed,
    resolver_rules,
)
from tests.runtime.runner import RunCase
from tests.runtime.test_browser_environment import CHROMIUM

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists() and os.environ.get("CI", "").lower() != "true",
    reason="Chromium is not installed (apt-get install chromium); required under CI=true",
)
ADMIN_MARKER = "installation-admin-console-5b7d"


@pytest.fixture
def admin_page(tmp_path: Path) -> Iterator[str]:
    """An "admin" page on another loopback port, as the server's own network would have."""
    import functools
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    root = tmp_path / "admin"
    root.mkdir()
    (root / "index.html").write_text(f"<html><body><h1>{ADMIN_MARKER}</h1></body></html>")
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a: None  # type: ignore[attr-defined]
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/index.html"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def allowed(site: str, runtime_config: RuntimeConfig) -> RuntimeConfig:
    """Only the fixture site's ``127.0.0.1:<port>`` is allowed."""
    return replace(runtime_config, browser_allowed_hosts=(site.removeprefix("http://"),))


def test_a_browser_case_cannot_start_on_a_loopback_admin_page_and_the_result_says_why(
    run_case: RunCase, allowed: RuntimeConfig, admin_page: str
) -> None:
    harness = PythonHarness.model_validate(
        {
            "id": "b",
            "version": "1.0.0",
            "config": {"callable": "tests.runtime.browser_agent:visit_admin"},
        }
    )
    case = CaseInput(case_id="b1", env=BrowserEnv(start_url=admin_page), task=admin_page)
    result = run_case(harness, case, config=allowed)
    port = admin_page.split(":")[2].split("/")[0]
    assert result.status == "error"
    assert result.error == (
        f"browser egress: 127.0.0.1:{port} is a loopback address not in the installation's"
        " browser allowed hosts (BENCHBOOK_BROWSER_ALLOWED_HOSTS)"
    )
    assert result.trace.env_snapshot.screenshot is None
    assert ADMIN_MARKER not in result.model_dump_json()


def test_a_harness_driving_the_browser_cannot_open_a_loopback_admin_page_either(
    run_case: RunCase,
    allowed: RuntimeConfig,
    site: str,
    admin_page: str,
) -> None:
    harness = PythonHarness.model_validate(
        {
            "id": "b",
            "version": "1.0.0",
            "config": {"callable": "tests.runtime.browser_agent:visit_admin"},
        }
    )
    case = CaseInput(case_id="b1", env=BrowserEnv(start_url=f"{site}/start.html"), task=admin_page)
    result = run_case(harness, case, config=allowed)
    assert result.status == "ok", result.error
    assert "ERR_NAME_NOT_RESOLVED" in result.trace.answer  # Chromium refused: the reason
    assert ADMIN_MARKER not in result.model_dump_json()  # answer, snapshot, screenshot alike


def test_the_same_page_opens_once_its_host_is_allowed_so_the_refusal_is_the_rule(
    run_case: RunCase, runtime_config: RuntimeConfig, admin_page: str
) -> None:
    harness = PythonHarness.model_validate(
        {
            "id": "b",
            "version": "1.0.0",
            "config": {"callable": "tests.runtime.browser_agent:visit_admin"},
        }
    )
    host = admin_page.removeprefix("http://").split("/")[0]
    config = replace(runtime_config, browser_allowed_hosts=(host,))
    case = CaseInput(case_id="b1", env=BrowserEnv(start_url=admin_page), task=admin_page)
    result = run_case(harness, case, config=config)
    assert result.status == "ok", result.error
    assert ADMIN_MARKER in result.trace.answer


def test_a_name_that_resolves_to_loopback_is_refused_after_resolution() -> None:
    allowed, notes = asyncio.run(resolve_allowed(("localhost:8000", "127.0.0.1:9000")))
    assert [a.pattern for a in allowed] == ["127.0.0.1:9000"]
    assert notes and notes[0].startswith("localhost:8000: resolves to 127.0.0.1 (loopback)")
    with pytest.raises(EgressError, match=r"localhost:8000 is a host not in .*loopback"):
        check_url("http://localhost:8000/", allowed, notes)
    with pytest.raises(EgressError, match=re.escape("169.254.169.254:80 is a link-local address")):
        check_url("http://169.254.169.254/latest/meta-data", allowed, notes)
    with pytest.raises(EgressError, match=re.escape("10.0.0.5:80 is a private address")):
        check_url("http://10.0.0.5/", allowed, notes)
    with pytest.raises(EgressError, match="only http"):
        check_url("file:///etc/passwd", allowed, notes)
    check_url("about:blank", allowed, notes)
    check_url("http://127.0.0.1:9000/x", allowed, notes)
    assert resolver_rules(allowed) == "MAP 127.0.0.1:9000 127.0.0.1:9000, MAP * ~NOTFOUND"


@pytest.mark.parametrize("entry", ["*.example.com", "http://a/b", "a:99999", ""])
def test_a_malformed_allowed_host_is_refused_naming_it(entry: str) -> None:
    with pytest.raises(EgressError, match="browser allowed host"):
        parse_entry(entry)
