"""Issue 14 item 5: the dataset page's cases table (case, env, task, expected, and metadata
columns chosen in a column picker) in a real browser at 1280×800 and on a 390×844 phone; the
chosen columns follow the pager; over plain HTTP a bad ``col`` is a 400 naming it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchbook.contracts import Case, Dataset
from benchbook.contracts.dataset import PromptEnv
from benchbook.datasets.identity import case_body, dataset_meta, sha256_hex
from benchbook.services.context import local_admin_context
from benchbook.services.datasets import store_version
from benchbook.settings import Settings
from benchbook.store.engine import make_engine
from tests.web.conftest import Server, log_in, shot

pytestmark = pytest.mark.slow

N_CASES = 120


def _case(i: int) -> Case:
    metadata: dict[str, Any] = {"difficulty": ["easy", "hard"][i % 2], "source_row": i}
    if i % 3 == 0:
        metadata["region"] = "Europe and the Mediterranean basin"
    return Case(
        id=f"case-{i:04d}",
        env=PromptEnv(),
        task=f"A long task text number {i}: " + "how many apples are left in the basket? " * 4,
        expected=str(i * 2),
        metadata=metadata,
    )


@pytest.fixture(scope="module")
def seeded(server: Server, web_database: tuple[str, str], tmp_path_factory: Any) -> None:
    """``columns``: 120 cases with metadata keys difficulty, source_row and (every third)
    region."""
    engine = make_engine(web_database[1])
    home = Path(tmp_path_factory.mktemp("columns"))
    ctx = local_admin_context(engine, Settings(home=home, database_url=web_database[1]))
    meta = dataset_meta(Dataset(id="columns", version="1.0.0", cases=[]))
    cases = [_case(i) for i in range(N_CASES)]
    store_version(
        ctx,
        "columns",
        "1.0.0",
        meta,
        ((c.id, case_body(c), sha256_hex(case_body(c))) for c in cases),
    )


def _column(page: Any, key: str) -> list[str]:
    """The values of metadata column ``key``, without the cells' screen-reader label."""
    cells = page.locator(f".cases .meta-cell[data-col='{key}']")
    texts = cells.evaluate_all("els => els.map(e => e.textContent)")
    return [t.strip().removeprefix(f"{key}: ") for t in texts]


def test_the_column_picker_adds_metadata_columns_that_follow_the_pager(
    new_page: Any, server: Server, seeded: None
) -> None:
    page = new_page()
    log_in(page, "viewer@example.org")
    page.goto("/datasets/columns")
    heads = page.locator(".cases-head span").all_inner_texts()
    assert [h.lower() for h in heads] == ["case", "env", "task", "expected"]
    assert page.locator(".cases .expected-cell").first.inner_text().endswith("0")
    page.click("[data-testid=column-picker] summary")
    offered = page.locator(".col-form input[name=col]").evaluate_all("els => els.map(e => e.value)")
    assert offered == ["difficulty", "region", "source_row"]
    with page.expect_navigation():
        page.check(".col-form input[value=difficulty]")
    assert page.locator("[data-testid=column-picker]").get_attribute("open") is not None
    with page.expect_navigation():
        page.check(".col-form input[value=region]")
    page.keyboard.press("Escape")
    page.click("[data-testid=column-picker] summary")  # close it for the screenshot
    assert page.locator(".cases-head .meta-col").all_inner_texts() == ["difficulty", "region"]
    assert _column(page, "difficulty") == ["easy", "hard", "easy", "hard", "easy"]
    assert _column(page, "region")[:2] == ["Europe and the Mediterranean basin", "—"]
    shot(page, server, "case-columns-1280")
    page.click("text=Show more cases")
    page.click("[data-testid=next-page]")
    assert page.locator("[data-testid=case-range]").inner_text() == "cases 51–100 of 120"
    assert page.locator(".cases .case-id").first.inner_text() == "case-0050"
    assert _column(page, "difficulty")[:2] == ["easy", "hard"]
    box = page.locator(".cases-head").bounding_box()
    first = page.locator(".cases .case summary").first.bounding_box()
    assert box and first and abs(box["width"] - first["width"]) < 2  # head and rows align


def test_the_cases_table_is_readable_on_a_phone(browser: Any, server: Server, seeded: None) -> None:
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, base_url=server.url, is_mobile=True
    )
    try:
        page = context.new_page()
        log_in(page, "viewer@example.org")
        page.goto("/datasets/columns?col=difficulty&col=region")
        assert page.locator(".cases-head").is_hidden()
        label = page.locator(".cases .meta-cell[data-col=difficulty]").first.inner_text()
        assert label == "difficulty: easy"
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, width
        page.click("[data-testid=column-picker] summary")
        panel = page.locator(".col-form").bounding_box()
        assert panel and panel["x"] >= 0 and panel["x"] + panel["width"] <= 390
        shot(page, server, "case-columns-390-picker")
        page.click("[data-testid=column-picker] summary")
        shot(page, server, "case-columns-390")
    finally:
        context.close()


def test_a_column_key_over_200_characters_is_a_400_naming_col(
    new_page: Any, server: Server, seeded: None
) -> None:
    page = new_page()
    log_in(page, "viewer@example.org")
    response = page.goto("/datasets/columns?col=" + "k" * 201)
    assert response.status == 400
    assert "col" in page.locator("main").inner_text()
