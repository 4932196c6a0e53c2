"""A python harness driving the case's browser over CDP (``tests.runtime.browser_agent:...``)."""

from __future__ import annotations

from playwright.sync_api import sync_playwright

from benchbook.contracts.run import CaseInput
from benchbook.runtime.harnesses.python import current_workspace


def answer_title(case_input: CaseInput) -> str:
    """Connect to ``BENCHBOOK_CDP_URL``, follow the page's link, answer the final page's title."""
    cdp_url = current_workspace().env_vars["BENCHBOOK_CDP_URL"]
    with sync_playwright() as playwright:
        browser = playwright.chromium.connect_over_cdp(cdp_url)
        page = browser.contexts[0].pages[0]
        page.wait_for_load_state()
        page.click("a#next")
        page.wait_for_url("**/done.html")
        title = page.title()
        browser.close()  # disconnects; the browser itself belongs to the environment
    return title


def visit_admin(case_input: CaseInput) -> str:
    """Try to open the URL in the task (the loopback admin page) from the case's page; answer
    what the page then holds, or the navigation error."""
    cdp_url = current_workspace().env_vars["BENCHBOOK_CDP_URL"]
    with sync_playwright() as playwright:
        browser = playwright.chromium.connect_over_cdp(cdp_url)
        page = browser.contexts[0].pages[0]
        try:
            page.goto(case_input.task, timeout=15_000)
            outcome = page.content()
        except Exception as exc:  # the navigation's own error is the answer
            outcome = f"navigation failed: {exc}"
        browser.close()
    return outcome
