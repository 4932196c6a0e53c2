"""The import wizard's Hugging Face source in a real browser, against the local fake Hub and
dataset viewer (``tests/hfserver``): search → config/split (or a file when the viewer does not
serve the dataset) → column roles → import with progress → the dataset page; a gated dataset
without a token shows the warning linking to the secrets page.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.hfserver.catalog import GATED_ID, GSM8K_ID, PAGED_ID, defaults, viewerless
from tests.hfserver.server import HfServer
from tests.web.conftest import Server, log_in, serve, shot

pytestmark = pytest.mark.slow

RAW_ID = "example-org/raw-jsonl"
RAW_ROWS = b"".join(
    f'{{"uid": "r{i}", "prompt": "Spell {i} in words.", "target": "n{i}"}}\n'.encode()
    for i in range(7)
)


@pytest.fixture(scope="module")
def hub(shared_data: Path) -> Iterator[HfServer]:
    """The fake Hub + viewer for the whole module: gsm8k, the gated dataset and a raw repo."""
    fake = HfServer()
    for dataset in defaults(shared_data):
        fake.add(dataset)
    fake.add(viewerless(RAW_ID, {"data/test.jsonl": RAW_ROWS}))
    with fake:
        yield fake


@pytest.fixture(scope="module")
def server(
    web_database: tuple[str, str], tmp_path_factory: pytest.TempPathFactory, hub: HfServer
) -> Iterator[Server]:
    """``benchbook serve`` reaching Hugging Face only at the fake server (no HF_TOKEN)."""
    env = {"HF_ENDPOINT": hub.url, "BENCHBOOK_HF_VIEWER_ENDPOINT": hub.viewer_url}
    with serve(web_database, tmp_path_factory.mktemp("home"), env) as running:
        yield running


def _role(page: Any, field: str) -> str:
    return str(page.locator(f'button.col-role[data-field="{field}"] .role-chip').inner_text())


def _search(page: Any, text: str) -> None:
    page.goto("/import")
    page.check('input[name="source-kind"][value="hf"]')
    page.fill("#hf-q", text)
    page.press("#hf-q", "Enter")
    page.wait_for_selector(".hf-hit")


def _import_and_land(page: Any, dataset_id: str) -> None:
    page.fill("#dataset-id", dataset_id)
    page.click("#import-btn")
    # The page moves on to the version 700 ms after its done state: waiting for that state
    # first raced the navigation under load (the element seen done, then detached, and the
    # wait went on in the next page until its timeout, CI 2026-12-06). Landing is the proof.
    page.wait_for_url(re.compile(rf"/datasets/{dataset_id}\?v=1\.0\.0$"), timeout=60_000)


def test_a_hugging_face_search_imports_gsm8k_main_test_with_its_1319_cases(
    new_page: Any, server: Server, hub: HfServer
) -> None:
    page = new_page()
    log_in(page, "admin@example.org")
    _search(page, "gsm8k")
    assert hub.calls("/api/datasets")[-1].query["search"] == "gsm8k"
    assert page.locator(".hf-hit").all_inner_texts()[0].startswith(GSM8K_ID)
    page.click(f'.hf-hit[data-dataset="{GSM8K_ID}"]')
    page.wait_for_selector('button.col-role[data-field="question"]')
    assert page.locator("#hf-split option:checked").inner_text() == "main / test"
    assert page.locator("#gated-warning").is_hidden()
    page.click('button.col-role[data-field="question"]')
    page.click('button.col-role[data-field="answer"]')
    page.click('button.col-role[data-field="answer"]')
    assert (_role(page, "question"), _role(page, "answer")) == ("task", "answer")
    # A locator assertion, not wait_for_function: the page's CSP forbids evaluating strings.
    expect(page.locator("#assertion")).to_contain_text("graded against", timeout=30_000)
    assert page.locator("#version-pick").is_hidden()
    shot(page, server, "import-hf")
    _import_and_land(page, "gsm8k-hf")
    assert "1,319 cases" in page.locator("[data-testid=case-count]").inner_text()
    lineage = page.locator(".lineage").inner_text()
    assert GSM8K_ID in lineage and "main" in lineage and "test" in lineage
    assert hub.calls("/viewer/rows") or hub.calls("/parquet")


def test_a_gated_dataset_without_a_token_warns_and_links_to_the_secrets_page(
    new_page: Any, server: Server
) -> None:
    page = new_page()
    log_in(page, "admin@example.org")
    _search(page, "gated")
    assert "gated" in page.locator(f'.hf-hit[data-dataset="{GATED_ID}"]').inner_text()
    page.click(f'.hf-hit[data-dataset="{GATED_ID}"]')
    warning = page.locator("#gated-warning")
    warning.wait_for(state="visible")
    assert warning.locator("a").get_attribute("href") == "/account#secrets"
    # A locator assertion, not wait_for_function: the page's CSP forbids evaluating strings.
    expect(page.locator("#source-status")).to_contain_text("HF_TOKEN", timeout=30_000)
    assert page.locator("#map-step").is_hidden()
    shot(page, server, "import-hf-gated")
    page.check('input[name="source-kind"][value="upload"]')
    assert warning.is_hidden()


def test_a_dataset_the_viewer_does_not_serve_is_imported_from_a_picked_file(
    new_page: Any, server: Server
) -> None:
    page = new_page()
    log_in(page, "admin@example.org")
    _search(page, "raw-jsonl")
    page.click(f'.hf-hit[data-dataset="{RAW_ID}"]')
    page.wait_for_selector('button.col-role[data-field="prompt"]')
    assert page.locator("#hf-split-box").is_hidden()
    assert page.locator("#hf-file option").all_inner_texts()[0].startswith("data/test.jsonl")
    page.click('button.col-role[data-field="prompt"]')
    page.click('button.col-role[data-field="uid"]')
    assert (_role(page, "prompt"), _role(page, "uid")) == ("task", "id")
    _import_and_land(page, "raw-jsonl")
    assert "7 cases" in page.locator("[data-testid=case-count]").inner_text()
    assert "data/test.jsonl" in page.locator(".lineage").inner_text()
    page.goto("/datasets/raw-jsonl/cases/r3")
    assert "Spell 3 in words." in page.locator("main").inner_text()


def _pick_paged_test_split(page: Any) -> None:
    """The 3-row ``default/test`` split of the paged dataset, question → task, answer → answer."""
    _search(page, "paged")
    page.click(f'.hf-hit[data-dataset="{PAGED_ID}"]')
    page.wait_for_selector('button.col-role[data-field="question"]')
    page.select_option("#hf-split", label="default / test")
    expect(page.locator("#preview-table tbody tr")).to_have_count(3, timeout=30_000)
    page.click('button.col-role[data-field="question"]')
    page.click('button.col-role[data-field="answer"]')
    page.click('button.col-role[data-field="answer"]')
    assert (_role(page, "question"), _role(page, "answer")) == ("task", "answer")
    page.fill("#dataset-id", "plan-bench")


def test_the_wizard_shows_the_version_import_will_register_and_an_identical_reimport(
    new_page: Any, server: Server
) -> None:
    page = new_page()
    log_in(page, "admin@example.org")
    _pick_paged_test_split(page)
    plan = page.locator("[data-testid=version-plan]")
    expect(plan).to_have_text("Will register plan-bench@1.0.0.", timeout=30_000)
    page.click("#import-btn")
    page.wait_for_url(re.compile(r"/datasets/plan-bench\?v=1\.0\.0$"), timeout=60_000)

    _pick_paged_test_split(page)
    expect(page.locator("#version-pick")).to_be_visible(timeout=30_000)
    expect(plan).to_have_text(
        "Will register plan-bench@1.0.1 — or nothing, if the content is identical to "
        "plan-bench@1.0.0."
    )
    page.check('input[name="bump"][value="minor"]')
    expect(plan).to_contain_text("Will register plan-bench@1.1.0 ")
    shot(page, server, "import-version-plan")
    page.click("#import-btn")
    # The done text is read as it appears; the page moves on 700 ms later, so a missed poll
    # (CI under load, 2026-12-06) is not a failure: landing on 1.0.0 with no new version
    # stored is the same "identical … nothing to import" outcome, checked without the race.
    page.wait_for_url(re.compile(r"/datasets/plan-bench\?v=1\.0\.0$"), timeout=60_000)
    versions = page.request.get("/api/datasets/plan-bench/versions").json()
    assert [v["version"] for v in versions] == ["1.0.0"]
