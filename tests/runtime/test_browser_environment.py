"""The ``browser`` environment (SPEC H.3): a real headless Chromium per case, driven over CDP."""

from __future__ import annotations

import base64
import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from benchbook.contracts.dataset import BrowserEnv
from benchbook.contracts.harness import CommandHarness, PythonHarness
from benchbook.contracts.run import CaseInput
from benchbook.runtime import RuntimeConfig
from tests.runtime.runner import RunCase

CHROMIUM = "/usr/bin/chromium"
pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists() and os.environ.get("CI", "").lower() != "true",
    reason="Chromium is not installed (apt-get install chromium); required under CI=true",
)


@pytest.fixture
def allowed(site: str, runtime_config: RuntimeConfig) -> RuntimeConfig:
    """The runtime config with the fixture site (and only it) among the browser's hosts."""
    return replace(runtime_config, browser_allowed_hosts=(site.removeprefix("http://"),))


def _case(start_url: str | None) -> CaseInput:
    return CaseInput(case_id="b1", env=BrowserEnv(start_url=start_url), task="title?", timeout_s=60)


def test_a_harness_drives_the_browser_over_cdp_and_the_snapshot_keeps_url_and_screenshot(
    run_case: RunCase, site: str, runtime_config: RuntimeConfig, allowed: RuntimeConfig
) -> None:
    harness = PythonHarness.model_validate(
        {
            "id": "browser-agent",
            "version": "1.0.0",
            "config": {"callable": "tests.runtime.browser_agent:answer_title"},
        }
    )
    result = run_case(harness, _case(f"{site}/start.html"), config=allowed)
    assert result.status == "ok", result.error
    assert result.trace.answer == "Checkout done"
    snap = result.trace.env_snapshot
    assert snap.url == f"{site}/done.html"
    assert snap.screenshot is not None
    png = base64.b64decode(snap.screenshot)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(png) > 1000
    assert list(runtime_config.work_root.iterdir()) == []  # profile and workdir removed


def test_a_command_harness_gets_the_cdp_url_and_the_browser_dies_with_the_case(
    run_case: RunCase, site: str
) -> None:
    script = (
        'curl -s "$BENCHBOOK_CDP_URL/json/version" > /dev/null && printf %s "$BENCHBOOK_CDP_URL"'
    )
    if shutil.which("curl") is None:
        script = 'printf %s "$BENCHBOOK_CDP_URL"'
    harness = CommandHarness.model_validate(
        {"id": "c", "version": "1.0.0", "config": {"argv": ["sh", "-c", script]}}
    )
    result = run_case(harness, _case(None))
    assert result.status == "ok", result.error
    cdp_url = result.trace.answer
    assert cdp_url.startswith("http://127.0.0.1:")
    assert result.trace.env_snapshot.url == "about:blank"
    import httpx

    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{cdp_url}/json/version", timeout=2)


def test_a_browser_that_cannot_start_is_an_environment_error(
    run_case: RunCase, tmp_path: Path
) -> None:
    config = RuntimeConfig(
        work_root=tmp_path / "w", mirrors=tmp_path / "m", chromium="/no/chromium"
    )
    harness = CommandHarness.model_validate(
        {"id": "c", "version": "1.0.0", "config": {"argv": ["true"]}}
    )
    result = run_case(harness, _case(None), config=config)
    assert result.status == "error"
    assert result.error is not None and result.error.startswith("browser did not start:")
