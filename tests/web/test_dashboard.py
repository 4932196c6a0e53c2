"""The dashboard in a real browser against a real server (SPEC G, issue 5 acceptance)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.conftest import Server, log_in, shot

pytestmark = pytest.mark.slow

BAD_CASES = json.dumps([{"id": "gsm8k-web-0", "env": {"kind": "prompt"}}])
GOOD_CASES = json.dumps(
    [
        {"id": "gsm8k-web-0", "env": {"kind": "prompt"}, "task": "What is 2 + 2?", "expected": "4"},
        {"id": "extra-1", "env": {"kind": "prompt"}, "task": "What is 3 + 3?", "expected": "6"},
    ]
)


def _role_of(page: Any, field: str) -> str:
    return str(page.locator(f'button.col-role[data-field="{field}"] .role-chip').inner_text())


def _import_gsm8k(page: Any, server: Server, gsm8k: Path) -> None:
    page.goto("/import")
    page.set_input_files("#file", str(gsm8k))
    page.wait_for_selector('button.col-role[data-field="question"]')
    assert _role_of(page, "question") == "none"
    assert "task" in page.locator("#assertion").inner_text()
    assert "warn" in (page.get_attribute("#assertion", "class") or "")
    assert page.locator("#import-btn").is_disabled()  # no task column yet: nothing to import
    page.click('button.col-role[data-field="question"]')
    page.click('button.col-role[data-field="answer"]')  # task is taken: → id
    assert _role_of(page, "answer") == "id"
    page.click('button.col-role[data-field="answer"]')
    assert (_role_of(page, "question"), _role_of(page, "answer")) == ("task", "answer")
    # A locator assertion, not wait_for_function: the page's CSP forbids evaluating strings.
    expect(page.locator("#assertion")).to_contain_text("graded against", timeout=30_000)
    assert page.locator("#version-pick").is_hidden()  # first import: no version picker
    assert page.locator("#import-btn").is_enabled()
    page.fill("#dataset-id", "gsm8k-web")
    shot(page, server, "import-wizard")
    page.click("#import-btn")
    # One wait for the whole done state: the page moves on 700 ms after it, so a second
    # round trip (reading the text after the bar) lost that race on a loaded machine.
    done = (
        '#progress[data-done=true][value="100"] + #progress-text:has-text("Imported 1,319 cases")'
    )
    page.wait_for_selector(done, timeout=60_000)
    page.wait_for_url(re.compile(r"/datasets/gsm8k-web\?v=1\.0\.0$"))


def _comment(page: Any) -> None:
    page.fill("#comment-body", "Checked the first rows against the paper.")
    page.press("#comment-body", "Control+Enter")
    page.wait_for_url(re.compile(r"/datasets/gsm8k-web#activity$"))
    timeline = page.locator(".timeline")
    assert "Checked the first rows against the paper." in timeline.inner_text()
    assert "Ada Admin" in timeline.locator(".tl-comment").inner_text()


def _register_second_version(page: Any, server: Server) -> None:
    page.goto("/register?id=gsm8k-web")
    page.fill("#ds-version", "1.1.0")
    page.fill("#ds-cases", BAD_CASES)
    page.click("button[value=validate]")
    report = page.locator("[data-testid=validation]")
    assert "cases.0.task" in report.inner_text()
    assert page.locator("button[value=register]").is_disabled()
    shot(page, server, "register-invalid")
    page.fill("#ds-cases", GOOD_CASES)
    page.click("button[value=validate]")
    assert "Valid." in page.locator("[data-testid=validation]").inner_text()
    assert "1.0.0" in page.locator("[data-testid=validation]").inner_text()
    shot(page, server, "register-valid")
    page.click("button[value=register]")
    page.wait_for_url(re.compile(r"/datasets/gsm8k-web\?v=1\.1\.0$"))
    assert "2 cases" in page.locator("[data-testid=case-count]").inner_text()


def _diff(page: Any, server: Server) -> None:
    page.click("text=Compare versions")
    page.wait_for_url(re.compile(r"/datasets/gsm8k-web/diff"))
    summary = page.locator("[data-testid=diff-summary]").inner_text().split()
    assert summary == ["1", "added", "1,318", "removed", "1", "changed", "0", "unchanged"]
    assert page.locator("#base").input_value() == "1.0.0"
    assert page.locator("#candidate").input_value() == "1.1.0"
    changed = page.locator(".changed-case").first.inner_text()
    assert "task" in changed and "What is 2 + 2?" in changed
    shot(page, server, "diff")


def _delete_version(page: Any, server: Server) -> None:
    page.goto("/datasets/gsm8k-web?v=1.1.0")
    page.click("text=Delete versions…")
    dialog = page.locator("#delete-dialog")
    assert dialog.is_visible()
    assert dialog.locator("input[value='1.1.0']").is_checked()
    assert not dialog.locator("input[value='1.0.0']").is_checked()
    page.fill("#confirm-id", "gsm8k-web")
    shot(page, server, "delete-dialog")
    dialog.locator("button[type=submit]").click()
    page.wait_for_url(re.compile(r"/datasets/gsm8k-web$"))
    assert "1,319" in page.locator("[data-testid=case-count]").inner_text()
    assert page.locator("text=Compare versions").count() == 0
    assert "deleted" in page.locator(".timeline").inner_text()


def test_an_admin_imports_comments_registers_compares_and_deletes_through_the_browser(
    new_page: Any, server: Server, shared_data: Path
) -> None:
    page = new_page()
    log_in(page, "admin@example.org")
    _import_gsm8k(page, server, shared_data / "gsm8k" / "test.jsonl")
    assert "1,319" in page.locator("[data-testid=case-count]").inner_text()
    assert page.locator("ol.cases > li").count() == 5
    shot(page, server, "dataset")
    _comment(page)
    _register_second_version(page, server)
    _diff(page, server)
    _delete_version(page, server)
    assert page.external == []


def test_a_viewer_sees_no_write_buttons_and_a_forced_write_post_is_refused(
    new_page: Any, server: Server
) -> None:
    admin = new_page()
    log_in(admin, "admin@example.org")
    admin.goto("/register")
    admin.fill("#ds-id", "viewer-check")
    admin.fill("#ds-version", "1.0.0")
    admin.fill("#ds-cases", GOOD_CASES)
    admin.click("button[value=validate]")
    admin.click("button[value=register]")
    admin.wait_for_url(re.compile(r"/datasets/viewer-check"))

    page = new_page()
    log_in(page, "viewer@example.org")
    assert page.locator("text=New dataset").count() == 0
    assert page.locator("a[href='/import']").count() == 0
    page.goto("/datasets/viewer-check")
    assert page.locator("text=Delete versions…").count() == 0
    assert page.locator("#comment-body").count() == 0
    assert page.locator("text=New version").count() == 0
    shot(page, server, "dataset-viewer")
    csrf = page.get_attribute("meta[name=csrf-token]", "content")
    body = {"csrf": csrf, "id": "x", "version": "1.0.0", "cases": "[]", "action": "register"}
    assert page.request.post("/register", form=body).status == 403
    delete = {"csrf": csrf, "scope": "all", "confirm": "viewer-check"}
    assert page.request.post("/datasets/viewer-check/delete", form=delete).status == 403
    page.goto("/import")
    assert "Not allowed" in page.locator("h1").inner_text()
    admin.goto("/datasets/viewer-check")
    assert "2 cases" in admin.locator("[data-testid=case-count]").inner_text()


def test_a_write_without_the_csrf_token_is_refused_and_logged_out_pages_go_to_login(
    new_page: Any, server: Server
) -> None:
    page = new_page()
    page.goto("/datasets?q=abc")
    assert re.search(r"/login\?next=/datasets%3Fq%3Dabc$", page.url)
    log_in(page, "admin@example.org")
    body = {"csrf": "forged", "id": "x", "version": "1.0.0", "cases": "[]", "action": "register"}
    assert page.request.post("/register", form=body).status == 403
    page.click("text=Log out")
    page.wait_for_url("**/login")
    page.goto("/account")
    assert "/login" in page.url
