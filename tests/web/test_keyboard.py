"""Keyboard use and odd case ids in a real browser against a real server: the case expander,
the danger dialog and the wizard's column headers work without a mouse; every case link of a
dataset with ids holding ``/``, ``%``, ``#``, ``?``, spaces, dots and unicode — and of an
OSWorld import (``chrome/030eeff7-…``) — opens its case as the browser resolves it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchbook.contracts import Case, Dataset
from benchbook.contracts.dataset import PromptEnv
from benchbook.datasets.identity import case_body, dataset_meta, sha256_hex
from benchbook.services import imports
from benchbook.services.context import local_admin_context
from benchbook.services.datasets import store_version
from benchbook.settings import Settings
from benchbook.store.engine import make_engine
from tests.web.conftest import Server, log_in, shot
from tests.web.test_pages import _severe

pytestmark = pytest.mark.slow

ODD_IDS = [
    "chrome/030eeff7-b492-4218-b312-701ec99ee0cc",
    "100% sure/50%2F50",
    "with space and #hash?query=1&x",
    "ünïcødé/日本語 ✓",
    "a/../b",
    "..",
    ".",
    "/leading//double/",
    "plus+sign=1;x,y@z",
]
ROWS = "".join(f'{{"q": "What is {i} + {i}?", "a": "{2 * i}", "n": {i}}}\n' for i in range(4))


def _store(ctx: Any, dataset_id: str, case_ids: list[str]) -> None:
    cases = [Case(id=c, env=PromptEnv(), task=f"Task of {c}", expected="ok") for c in case_ids]
    meta = dataset_meta(Dataset(id=dataset_id, version="1.0.0", cases=[]))
    rows = ((c.id, case_body(c), sha256_hex(case_body(c))) for c in cases)
    store_version(ctx, dataset_id, "1.0.0", meta, rows)


@pytest.fixture(scope="module")
def seeded(
    server: Server, web_database: tuple[str, str], tmp_path_factory: Any, shared_data: Path
) -> None:
    """``odd`` (the ids above), ``keys`` (7 cases) and ``osworld`` imported from the examples
    folder (369 tasks, 22 ids under ``chrome/`` or ``thunderbird/``)."""
    engine = make_engine(web_database[1])
    home = Path(tmp_path_factory.mktemp("keys"))
    ctx = local_admin_context(engine, Settings(home=home, database_url=web_database[1]))
    _store(ctx, "odd", ODD_IDS)
    _store(ctx, "keys", [f"k{i}" for i in range(7)])
    request = imports.parse_import_request({"benchmark": "osworld"})
    imports.import_benchmark(ctx, request, shared_data / "osworld" / "examples")
    engine.dispose()


def _case_links(page: Any) -> list[str]:
    return list(page.eval_on_selector_all("ol.cases a", "els => els.map(e => e.href)"))


def test_every_odd_case_id_opens_from_its_link_in_the_browser(
    new_page: Any, server: Server, seeded: None
) -> None:
    page = new_page()
    log_in(page, "admin@example.org")
    page.goto("/datasets/odd?cases=50")
    links = _case_links(page)
    assert len(links) == len(ODD_IDS)
    opened = []
    for link in links:
        response = page.goto(link)
        assert response is not None and response.status == 200, link
        opened.append(page.locator("h1 code").inner_text())
    assert sorted(opened) == sorted(ODD_IDS)


def test_an_osworld_dataset_page_links_every_slashed_case_id(
    new_page: Any, server: Server, seeded: None
) -> None:
    page = new_page()
    log_in(page, "admin@example.org")
    problems = {}
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        page.goto("/datasets/osworld?cases=50")
        links = _case_links(page)
        assert len(links) == 50
        slashed = [x for x in links if "/cases/chrome/" in x or "/cases/thunderbird/" in x]
        assert slashed, links[:5]
        shot(page, server, f"{scheme}-dataset-osworld")
        problems[f"dataset {scheme}"] = _severe(page)
        page.locator("ol.cases summary").first.click()
        shot(page, server, f"{scheme}-dataset-osworld-open")
        response = page.goto(slashed[0])
        assert response is not None and response.status == 200
        assert "/" in page.locator("h1 code").inner_text()
        shot(page, server, f"{scheme}-case-osworld")
        problems[f"case {scheme}"] = _severe(page)
    assert problems == {k: [] for k in problems}
    assert page.external == []


def test_the_case_expander_opens_and_closes_from_the_keyboard(
    new_page: Any, server: Server, seeded: None
) -> None:
    page = new_page()
    log_in(page, "admin@example.org")
    page.goto("/datasets/keys")
    first = page.locator("ol.cases details").first
    page.locator("ol.cases summary").first.focus()
    page.keyboard.press("Enter")
    assert first.get_attribute("open") is not None
    assert page.locator("ol.cases details a").first.is_visible()
    page.keyboard.press("Space")
    assert first.get_attribute("open") is None
    page.keyboard.press("Tab")
    focused = page.evaluate("document.activeElement.closest('details') !== null")
    assert focused, "Tab from a closed summary lands on the next summary"


def test_the_danger_dialog_opens_traps_focus_and_closes_from_the_keyboard(
    new_page: Any, server: Server, seeded: None
) -> None:
    page = new_page()
    log_in(page, "admin@example.org")
    page.goto("/datasets/keys")
    opener = page.locator("[data-open-dialog=delete-dialog]")
    opener.focus()
    page.keyboard.press("Enter")
    dialog = page.locator("#delete-dialog")
    assert dialog.is_visible()
    assert page.evaluate("document.activeElement.id") == "confirm-id"
    for _ in range(12):
        page.keyboard.press("Tab")
        inside = "document.getElementById('delete-dialog').contains(document.activeElement)"
        assert page.evaluate(inside) or page.evaluate("document.activeElement === document.body")
    page.keyboard.press("Escape")
    assert not dialog.is_visible()
    assert page.evaluate("document.activeElement.dataset.openDialog") == "delete-dialog"
    page.keyboard.press("Space")
    assert dialog.is_visible()
    page.locator("#delete-dialog [data-close-dialog]").focus()
    page.keyboard.press("Enter")
    assert not dialog.is_visible()
    assert page.evaluate("document.activeElement.dataset.openDialog") == "delete-dialog"


def test_column_headers_cycle_roles_with_enter_and_space_and_keep_focus(
    new_page: Any, server: Server, tmp_path: Path
) -> None:
    data = tmp_path / "sums.jsonl"
    data.write_text(ROWS)
    page = new_page()
    log_in(page, "admin@example.org")
    page.goto("/import")
    page.set_input_files("#file", str(data))
    header = 'button.col-role[data-field="q"]'
    page.wait_for_selector(header)
    page.focus(header)
    roles = []
    for key in ("Enter", "Space", "Enter", "Space"):
        page.keyboard.press(key)
        focused = page.evaluate("document.activeElement.dataset.field")
        assert focused == "q", f"focus lost after {key}"
        roles.append(page.locator(f"{header} .role-chip").inner_text())
    assert roles == ["task", "id", "answer", "none"]
    label = page.get_attribute(header, "aria-label") or ""
    assert "role none" in label
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')").startswith(
        "Column q: role task"
    )
    assert _severe(page) == []
