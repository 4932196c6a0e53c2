"""Phones (issue 14 item 10): no page scrolls sideways at 390×844 with real data — GSM8K (two
versions and their diff), OSWorld (slashed ids, nested JSON), SWE-bench Lite (patches, long
metadata), a long unbroken id and a long comment — measured as
``document.documentElement.scrollWidth <= innerWidth`` on every page; screenshots of each at
390×844 and 1280×800 under ``artifacts/screenshots/``. One server (SQLite: the layout does not
depend on the backend) and one browser context for the module.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchbook.contracts import Case, Dataset
from benchbook.contracts.dataset import PromptEnv
from benchbook.datasets.identity import case_body, dataset_meta, sha256_hex
from benchbook.services import comments, imports, recipes
from benchbook.services.context import local_admin_context
from benchbook.services.datasets import store_version
from benchbook.settings import Settings
from benchbook.store.engine import make_engine
from tests.web.conftest import SCREENSHOTS, Server, log_in

pytestmark = pytest.mark.slow

LONG_ID = "an-unbroken-dataset-identifier-" + "z" * 90
LONG_COMMENT = "See https://example.org/" + "very-long-path-segment/" * 12 + " " + "w" * 300

RECIPE = {
    "id": "arith-with-a-rather-long-recipe-identifier",
    "version": "1.0.0",
    "description": "Small sums read from a JSONL file, graded by exact match. " * 4,
    "source": {"kind": "file", "format": "jsonl"},
    "mapping": {"id_field": "id", "task_field": "question", "answer_field": "answer"},
}

#: What every ``(name, path)`` page shows; all must fit 390 px.
PAGES = [
    ("datasets", "/datasets"),
    ("dataset-gsm8k", "/datasets/gsm8k"),
    ("dataset-gsm8k-page", "/datasets/gsm8k?after=49"),
    ("case-gsm8k", "/datasets/gsm8k/cases/gsm8k-0?v=1.0.0"),
    ("diff-gsm8k", "/datasets/gsm8k/diff"),
    ("dataset-osworld", "/datasets/osworld?cases=50"),
    ("case-osworld", "/datasets/osworld/cases/chrome/030eeff7-b492-4218-b312-701ec99ee0cc"),
    ("dataset-swebench", "/datasets/swe-bench-lite"),
    ("case-swebench", "/datasets/swe-bench-lite/cases/django__django-15202"),
    ("dataset-long-id", f"/datasets/{LONG_ID}"),
    ("dataset-long-id-page", f"/datasets/{LONG_ID}?at=51"),
    ("case-long-id", f"/datasets/{LONG_ID}/cases/{LONG_ID}-7"),
    ("register", "/register"),
    ("import", "/import"),
    ("recipes", "/recipes"),
    ("recipe", f"/recipes/{RECIPE['id']}"),
    ("account", "/account"),
    ("members", "/members"),
    ("not-found", "/datasets/no-such-dataset"),
]


@pytest.fixture(scope="module")
def web_database(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """SQLite only (overrides the conftest's two backends: layout is backend-free)."""
    yield "sqlite", f"sqlite:///{tmp_path_factory.mktemp('phone') / 'benchbook.db'}"


@pytest.fixture(scope="module")
def real_data(
    server: Server, web_database: tuple[str, str], tmp_path_factory: Any, shared_data: Path
) -> None:
    """GSM8K test then the train head as a second version, OSWorld's examples, SWE-bench
    Lite's test split, and a dataset with a long id carrying a long comment."""
    engine = make_engine(web_database[1])
    home = Path(tmp_path_factory.mktemp("phone-home"))
    ctx = local_admin_context(engine, Settings(home=home, database_url=web_database[1]))
    for request, path in (
        ({"benchmark": "gsm8k"}, shared_data / "gsm8k" / "test.jsonl"),
        (
            {"benchmark": "gsm8k", "version": "1.1.0"},
            shared_data / "gsm8k" / "train.first300.jsonl",
        ),
        ({"benchmark": "osworld"}, shared_data / "osworld" / "examples"),
        ({"benchmark": "swe-bench-lite"}, shared_data / "swebench" / "swe-bench-lite-test.json"),
    ):
        imports.import_benchmark(ctx, imports.parse_import_request(request), path)
    long_cases = [
        Case(id=f"{LONG_ID}-{i}", env=PromptEnv(), task=LONG_COMMENT, expected="ok")
        for i in range(60)
    ]
    meta = dataset_meta(Dataset(id=LONG_ID, version="1.0.0", cases=[]))
    rows = ((c.id, case_body(c), sha256_hex(case_body(c))) for c in long_cases)
    store_version(ctx, LONG_ID, "1.0.0", meta, rows)
    recipes.register_recipe(ctx, recipes.parse_recipe(RECIPE))
    comments.create_comment(ctx, "dataset", LONG_ID, LONG_COMMENT)
    engine.dispose()


def _overflow(page: Any) -> dict[str, Any]:
    """The page's scroll width and the widest elements past the viewport's right edge."""
    return dict(
        page.evaluate(
            """() => {
          const width = window.innerWidth;
          const wide = [];
          for (const el of document.querySelectorAll('body *')) {
            const box = el.getBoundingClientRect();
            if (box.right > width + 1 && box.width > 0) {
              const name = `${el.tagName.toLowerCase()}.${el.className}`.slice(0, 60);
              wide.push(`${name} ${Math.round(box.right)}`);
            }
          }
          return {scroll: document.documentElement.scrollWidth, width, wide: wide.slice(0, 6)};
        }"""
        )
    )


def test_no_page_scrolls_sideways_on_a_phone_with_real_benchmarks(
    browser: Any, server: Server, real_data: None
) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, base_url=server.url, is_mobile=True
    )
    try:
        page = context.new_page()
        log_in(page, "admin@example.org")
        wide = {}
        for name, path in PAGES:
            response = page.goto(path)
            assert response is not None
            assert response.status == (404 if name == "not-found" else 200), path
            page.set_viewport_size({"width": 1280, "height": 800})
            page.screenshot(path=str(SCREENSHOTS / f"phone-{name}-1280.png"))
            page.set_viewport_size({"width": 390, "height": 844})
            page.screenshot(path=str(SCREENSHOTS / f"phone-{name}-390.png"))
            measured = _overflow(page)
            if measured["scroll"] > measured["width"]:
                wide[name] = measured
            if name == "case-swebench":  # the patch whole, highlighted as a diff
                assert page.locator("[data-testid=patch]").count() == 2  # patch, test_patch
                assert page.locator(".pl-add").count() > 0 and page.locator(".pl-del").count() > 0
            if name == "case-osworld":  # nested JSON pretty-printed and collapsible
                assert page.locator("details.json").count() >= 2
        page.context.clear_cookies()
        page.goto("/login")
        if (measured := _overflow(page))["scroll"] > measured["width"]:
            wide["login"] = measured
        assert wide == {}, json.dumps(wide, indent=1)
    finally:
        context.close()


def test_a_comment_is_deleted_after_the_dialog_a_bad_tag_stays_and_api_docs_load_offline(
    browser: Any, server: Server, real_data: None
) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, base_url=server.url)
    try:
        page = context.new_page()
        log_in(page, "admin@example.org")
        page.goto(f"/datasets/{LONG_ID}")
        delete = page.locator("form[data-confirm] button", has_text="Delete comment")
        delete.click()
        dialog = page.locator("#confirm-dialog")
        assert dialog.is_visible() and "Delete this comment" in dialog.inner_text()
        page.screenshot(path=str(SCREENSHOTS / "phone-confirm-dialog-390.png"))
        dialog.locator("button[value=cancel]").click()
        assert not dialog.is_visible() and page.locator(".comment-body").count() == 1
        delete.click()
        dialog.locator("button[value=ok]").click()
        page.wait_for_url("**#activity")
        assert page.locator("[data-testid=notice]").inner_text() == "Comment deleted."
        assert page.locator(".comment-body").count() == 0
        page.reload()
        assert page.locator("[data-testid=notice]").count() == 0  # shown once
        page.keyboard.press("j")
        page.keyboard.press("j")
        focused = "document.activeElement.closest('li.case')?.querySelector('code').title"
        assert page.evaluate(focused) == f"{LONG_ID}-1", page.evaluate(
            "document.activeElement.outerHTML.slice(0, 300)"
        )
        page.keyboard.press("k")
        assert page.evaluate(focused) == f"{LONG_ID}-0"

        page.fill("#version-tags", "stable, latest")
        page.click("form.tags-form button[type=submit]")
        error = page.locator("[data-testid=field-error]")
        assert "latest" in error.inner_text()
        assert page.locator("#version-tags").input_value() == "stable, latest"
        assert page.evaluate("document.activeElement.id") == "version-tags"
        page.screenshot(path=str(SCREENSHOTS / "phone-tags-refused-390.png"))
        page.set_viewport_size({"width": 1280, "height": 800})
        page.screenshot(path=str(SCREENSHOTS / "phone-tags-refused-1280.png"))

        elsewhere: list[str] = []
        page.on(
            "request", lambda r: None if r.url.startswith(server.url) else elsewhere.append(r.url)
        )
        page.goto("/api/docs")  # Swagger UI offline: every file from Benchbook itself
        page.wait_for_selector(".opblock-summary", timeout=60_000)
        assert page.locator(".opblock-summary").count() > 20
        page.screenshot(path=str(SCREENSHOTS / "phone-api-docs-1280.png"))
        assert elsewhere == []
    finally:
        context.close()
