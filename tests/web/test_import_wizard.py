"""The import wizard in a real browser (issue 14 items 1-4): the real GSM8K ``test.jsonl`` is
recognised and imported as ``gsm8k`` with the CLI's cases; a plain CSV gets an answer extraction
(whole cell, marker, regular expression) with a live sample, graders from the answers' type, a
multi-line task template previewed on three rows; errors show beside their step; a failed
import stops the bar and says why; nothing scrolls sideways at 390 px.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from benchbook.contracts import Case
from benchbook.services import datasets as ds
from benchbook.services import recipes
from benchbook.services.context import Context, local_admin_context
from benchbook.settings import Settings
from benchbook.store.engine import make_engine
from tests.web.conftest import SCREENSHOTS, Server, log_in, shot

pytestmark = pytest.mark.slow


def _role(page: Any, field: str) -> str:
    return str(page.locator(f'button.col-role[data-field="{field}"] .role-chip').inner_text())


def _cycle_to(page: Any, field: str, role: str) -> None:
    for _ in range(4):
        if _role(page, field) == role:
            return
        page.click(f'button.col-role[data-field="{field}"]')
    assert _role(page, field) == role


def _context(url: str, home: Path) -> Context:
    return local_admin_context(make_engine(url), Settings(home=home, database_url=url))


def _all_cases(ctx: Context, dataset_id: str) -> tuple[Any, list[Case]]:
    view = ds.get_dataset(ctx, dataset_id, "1.0.0", limit=1000)
    cases = list(view.cases)
    while view.next_after is not None:
        view = ds.get_dataset(ctx, dataset_id, "1.0.0", after=view.next_after, limit=1000)
        cases.extend(view.cases)
    return view.version, cases


def _cli_import(gsm8k: Path, home: Path, benchmark: str = "gsm8k") -> dict[str, Any]:
    """``benchbook import gsm8k --file test.jsonl --json`` into its own SQLite database."""
    env = {**os.environ, "BENCHBOOK_HOME": str(home)}
    env.pop("BENCHBOOK_DATABASE_URL", None)
    script = Path(sys.executable).parent / "benchbook"
    done = subprocess.run(
        [str(script), "import", benchmark, "--file", str(gsm8k), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return dict(json.loads(done.stdout))


def _offered(page: Any, picker: str, path: Path | list[Path], benchmark: str) -> Any:
    """Log in, pick ``path`` in the wizard's ``picker`` input and wait for the offer to
    import it as ``benchmark``; the offer's locator."""
    log_in(page, "admin@example.org")
    page.goto("/import")
    page.set_input_files(picker, [str(p) for p in path] if isinstance(path, list) else str(path))
    offer = page.locator("[data-testid=recognized]")
    expect(offer).to_be_visible(timeout=60_000)
    expect(page.locator("#use-match")).to_have_text(f"Import as {benchmark}")
    return offer


def test_the_real_gsm8k_file_is_offered_as_gsm8k_and_imports_the_clis_cases(
    new_page: Any,
    server: Server,
    web_database: tuple[str, str],
    shared_data: Path,
    tmp_path: Path,
) -> None:
    gsm8k = shared_data / "gsm8k" / "test.jsonl"
    page = new_page()
    offer = _offered(page, "#file", gsm8k, "gsm8k")
    assert "This file is gsm8k" in offer.inner_text()
    assert "answer, question" in offer.inner_text()
    shot(page, server, "import-recognized")
    page.click("#use-match")
    summary = page.locator("[data-testid=match-summary]")
    expect(summary).to_contain_text("Graders: numeric", timeout=30_000)
    expect(summary).to_contain_text("Lineage: catalog gsm8k@1.0.0, read from your file test.jsonl")
    expect(page.locator("#assertion")).to_contain_text("####")
    expect(page.locator("[data-testid=version-plan]")).to_have_text("Will register gsm8k@1.0.0.")
    assert page.locator("#dataset-id").get_attribute("placeholder") == "gsm8k"
    # the column headers show the recipe's mapping, not "none" everywhere (issue 30 §6)
    roles = page.locator("#preview-table thead th").evaluate_all(
        "ths => Object.fromEntries(ths.map(th => [th.querySelector('.col-name').textContent,"
        " th.querySelector('.role-chip').textContent]))"
    )
    assert roles == {"question": "task", "answer": "answer"}
    page.click("#import-btn")
    page.wait_for_url(re.compile(r"/datasets/gsm8k\?v=1\.0\.0$"), timeout=60_000)

    # The same file again: the plan knows before Import that nothing is new.
    page.goto("/import")
    page.set_input_files("#file", str(gsm8k))
    page.click("#use-match")
    expect(page.locator("[data-testid=version-plan]")).to_have_text(
        "Identical to gsm8k@1.0.0 — nothing to import.", timeout=30_000
    )
    expect(page.locator("#import-btn")).to_be_disabled()  # never beside an enabled Import
    shot(page, server, "import-identical")

    cli = _cli_import(gsm8k, tmp_path / "cli-home")
    web_ctx = _context(web_database[1], tmp_path / "web-home")
    cli_ctx = _context(f"sqlite:///{tmp_path / 'cli-home' / 'benchbook.db'}", tmp_path / "c")
    web_version, web_cases = _all_cases(web_ctx, "gsm8k")
    cli_version, cli_cases = _all_cases(cli_ctx, "gsm8k")
    assert len(web_cases) == cli["cases"] == 1319
    assert [c.model_dump() for c in web_cases] == [c.model_dump() for c in cli_cases]
    # An upload is recorded as `--file` of a file with its name: the same version, hash and all.
    assert web_version.produced_by == cli_version.produced_by
    assert web_version.description == cli_version.description
    assert web_version.content_hash == cli_version.content_hash == cli["content_hash"]


SUMS = "q,a\n" + "".join(f'"What is {i} + {i}?","{i} plus {i} ## {2 * i}"\n' for i in range(30))


def test_a_plain_csv_gets_answer_extraction_graders_a_template_and_errors_by_their_step(
    new_page: Any, server: Server, tmp_path: Path
) -> None:
    data = tmp_path / "word-sums_test.csv"
    data.write_text(SUMS)
    page = new_page()
    log_in(page, "admin@example.org")
    page.goto("/import")
    page.set_input_files("#file", str(data))
    page.wait_for_selector('button.col-role[data-field="q"]')
    assert page.locator("[data-testid=recognized]").is_hidden()
    _cycle_to(page, "q", "task")
    _cycle_to(page, "a", "answer")
    sample = page.locator("[data-testid=extract-sample]")
    expect(sample).to_have_text('"0 plus 0 ## 0"', timeout=30_000)
    expect(page.locator('input[name="grader"][value="exact"]')).to_be_checked()
    expect(page.locator("#dataset-id")).to_have_attribute("placeholder", "word-sums")
    expect(page.locator("[data-testid=version-plan]")).to_have_text(
        "Will register word-sums@1.0.0."
    )

    page.check('input[name="extract"][value="marker"]')
    page.fill("#extract-marker", "##")
    expect(sample).to_have_text('"0"', timeout=30_000)
    expect(page.locator('input[name="grader"][value="numeric"]')).to_be_checked()
    expect(page.locator('input[name="grader"][value="exact"]')).not_to_be_checked()

    page.check('input[name="extract"][value="regex"]')
    page.fill("#extract-regex", "## (")
    error = page.locator("#extract-error")
    expect(error).to_be_visible(timeout=30_000)
    assert "answer_pattern" in error.inner_text()
    assert page.locator("#source-status").inner_text() == ""
    shot(page, server, "import-extract-error")
    page.fill("#extract-regex", r"## (\d+)")
    expect(error).to_be_hidden(timeout=30_000)
    expect(sample).to_have_text('"0"')

    page.click("#advanced summary")
    page.fill("#adv-template", "Add up:\n{q}")
    rows = page.locator("#template-preview li")
    expect(rows.nth(2)).to_have_text("Add up:\nWhat is 2 + 2?", timeout=30_000)
    expect(rows).to_have_count(3)
    shot(page, server, "import-csv")

    page.click("#import-btn")
    page.wait_for_url(re.compile(r"/datasets/word-sums\?v=1\.0\.0$"), timeout=60_000)
    page.goto("/datasets/word-sums/cases/word-sums-7")
    body = page.locator("main").inner_text()
    assert "What is 7 + 7?" in body and "14" in body and "numeric" in body


def test_a_failed_import_stops_the_bar_and_says_why_beside_the_import_step(
    new_page: Any, server: Server, tmp_path: Path
) -> None:
    # The preview reads 20 rows; row 26's blank question fails only in the import.
    lines = ['"What is 1 + 1?","2"'] * 25 + ['"","3"'] + ['"What is 2 + 2?","4"'] * 4
    data = tmp_path / "late-blank.csv"
    data.write_text("q,a\n" + "\n".join(lines) + "\n")
    page = new_page()
    log_in(page, "admin@example.org")
    page.goto("/import")
    page.set_input_files("#file", str(data))
    page.wait_for_selector('button.col-role[data-field="q"]')
    _cycle_to(page, "q", "task")
    page.fill("#dataset-id", "no spaces allowed")
    id_error = page.locator("#id-error")
    expect(id_error).to_be_visible(timeout=30_000)
    assert "id" in id_error.inner_text() and page.locator("#map-error").is_hidden()
    page.fill("#dataset-id", "")
    expect(id_error).to_be_hidden(timeout=30_000)
    expect(page.locator("#import-btn")).to_be_enabled(timeout=30_000)
    page.click("#import-btn")
    error = page.locator("#import-error")
    expect(error).to_be_visible(timeout=60_000)
    assert "task is empty" in error.inner_text() and "nothing was imported" in error.inner_text()
    assert page.get_attribute("#progress", "data-failed") == "true"
    assert page.get_attribute("#progress", "value") is not None  # no endless animation
    expect(page.locator("#progress-text")).to_contain_text("nothing was imported")
    assert page.locator("#import-btn").is_enabled()
    shot(page, server, "import-failed")


def test_the_wizard_does_not_scroll_sideways_on_a_phone(
    browser: Any, server: Server, shared_data: Path
) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, base_url=server.url)
    try:
        page = context.new_page()
        log_in(page, "admin@example.org")
        page.goto("/import")
        page.set_input_files("#file", str(shared_data / "gsm8k" / "test.jsonl"))
        expect(page.locator("[data-testid=recognized]")).to_be_visible(timeout=30_000)
        _cycle_to(page, "question", "task")
        _cycle_to(page, "answer", "answer")
        expect(page.locator("#answer-options")).to_be_visible(timeout=30_000)
        width = page.evaluate("document.documentElement.scrollWidth")
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(
            path=str(SCREENSHOTS / f"{server.backend}-import-phone.png"), full_page=True
        )
        assert width <= 390, f"the wizard is {width}px wide at 390px"
    finally:
        context.close()


SHARED_RECIPE = {
    "id": "shared-sums",
    "version": "1.2.0",
    "description": "Sums everyone can import.",
    "source": {"kind": "file", "format": "jsonl"},
    "mapping": {"id_field": "id", "task_template": "Add:\n{question}", "answer_field": "answer"},
}


def test_a_shared_recipe_is_a_source_and_an_uploads_description_is_kept(
    new_page: Any, server: Server, web_database: tuple[str, str], tmp_path: Path
) -> None:
    ctx = _context(web_database[1], tmp_path / "home")
    recipes.register_recipe(ctx, recipes.parse_recipe(SHARED_RECIPE), shared=True)
    data = tmp_path / "sums.jsonl"
    data.write_text(
        "".join(f'{{"id": "s{i}", "question": "{i}+1", "answer": {i + 1}}}\n' for i in range(4))
    )
    page = new_page()
    log_in(page, "admin@example.org")
    page.goto("/import")
    page.check('input[name="source-kind"][value="recipe"]')
    page.select_option("#recipe", "shared-sums")
    page.set_input_files("#recipe-file", str(data))
    page.click("#preview-btn")
    summary = page.locator("[data-testid=match-summary]")
    expect(summary).to_contain_text("Lineage: recipe shared-sums@1.2.0 (_shared)", timeout=30_000)
    assert page.locator("#description-box").is_hidden()
    expect(page.locator("#template-preview li")).to_have_count(3)
    expect(page.locator("[data-testid=version-plan]")).to_have_text(
        "Will register shared-sums@1.0.0."
    )
    page.click("#import-btn")
    page.wait_for_url(re.compile(r"/datasets/shared-sums\?v=1\.0\.0$"), timeout=60_000)
    lineage = ds.get_dataset(ctx, "shared-sums", limit=1).version.produced_by
    assert lineage is not None and (lineage.via, lineage.version) == ("recipe", "1.2.0")

    page.goto("/import")
    page.set_input_files("#file", str(data))
    page.wait_for_selector('button.col-role[data-field="question"]')
    _cycle_to(page, "question", "task")
    page.fill("#description", "Four small sums.")
    page.fill("#dataset-id", "described")
    expect(page.locator("#import-btn")).to_be_enabled(timeout=30_000)
    page.click("#import-btn")
    page.wait_for_url(re.compile(r"/datasets/described\?v=1\.0\.0$"), timeout=60_000)
    described = ds.get_dataset(ctx, "described", limit=1).version.description
    assert described == "Four small sums. This version: file sums.jsonl."


def test_an_osworld_folder_picked_whole_imports_as_the_clis_folder_import(
    new_page: Any, server: Server, web_database: tuple[str, str], shared_data: Path, tmp_path: Path
) -> None:
    examples = shared_data / "osworld" / "examples"
    page = new_page()
    offer = _offered(page, "#folder", examples, "osworld")
    assert "These files are osworld" in offer.inner_text()
    shot(page, server, "import-folder-recognized")
    page.click("#use-match")
    expect(page.locator("[data-testid=match-summary]")).to_contain_text(
        "read from your folder examples (369 files)", timeout=30_000
    )
    shot(page, server, "import-folder")
    page.click("#import-btn")
    page.wait_for_url(re.compile(r"/datasets/osworld\?v=1\.0\.0$"), timeout=120_000)
    cli = _cli_import(examples, tmp_path / "cli-home", "osworld")
    web = ds.get_dataset(_context(web_database[1], tmp_path / "web"), "osworld", limit=1).version
    assert (web.cases, web.content_hash) == (369, cli["content_hash"])


def test_a_folder_picked_whole_with_one_task_file_is_read_as_that_folder(
    new_page: Any, server: Server, web_database: tuple[str, str], shared_data: Path, tmp_path: Path
) -> None:
    """A one-file folder went up as a plain file: read as a JSON object source, OSWorld's task
    was refused ("an object source must wrap exactly one list") and nothing was offered."""
    task = sorted((shared_data / "osworld" / "examples" / "chrome").glob("*.json"))[0]
    picked = tmp_path / "picked"
    (picked / "chrome").mkdir(parents=True)
    shutil.copy(task, picked / "chrome" / task.name)
    page = new_page()
    _offered(page, "#folder", picked, "osworld")
    page.click("#use-match")
    expect(page.locator("[data-testid=match-summary]")).to_contain_text(
        "read from your folder picked (1 file)", timeout=30_000
    )
    shot(page, server, "import-folder-one-file")
    page.set_viewport_size({"width": 390, "height": 844})
    shot(page, server, "import-folder-one-file-phone")
    page.set_viewport_size({"width": 1280, "height": 800})
    page.fill("#dataset-id", "one-task")
    page.click("#import-btn")
    page.wait_for_url(re.compile(r"/datasets/one-task\?v=1\.0\.0$"), timeout=60_000)
    web = ds.get_dataset(_context(web_database[1], tmp_path / "web"), "one-task", limit=1)
    cli = ds.get_dataset(
        _context(f"sqlite:///{tmp_path / 'cli-home' / 'benchbook.db'}", tmp_path / "cli-home"),
        _cli_import(picked, tmp_path / "cli-home", "osworld")["id"],
        limit=1,
    )
    assert web.version.cases == 1
    assert [c.model_dump() for c in web.cases] == [c.model_dump() for c in cli.cases]
    assert [c.id for c in web.cases] == [task.stem]


def test_several_task_files_picked_at_once_are_read_as_a_folder(
    new_page: Any, server: Server, web_database: tuple[str, str], shared_data: Path, tmp_path: Path
) -> None:
    picked = sorted((shared_data / "osworld" / "examples" / "vlc").glob("*.json"))[:4]
    page = new_page()
    _offered(page, "#file", picked, "osworld")
    page.click("#use-match")
    expect(page.locator("[data-testid=match-summary]")).to_contain_text(
        "read from your folder files (4 files)", timeout=30_000
    )
    page.fill("#dataset-id", "vlc-four")
    page.click("#import-btn")
    page.wait_for_url(re.compile(r"/datasets/vlc-four\?v=1\.0\.0$"), timeout=60_000)
    assert (
        ds.get_dataset(_context(web_database[1], tmp_path), "vlc-four", limit=1).version.cases == 4
    )


def test_a_jsonl_uploads_progress_bar_shows_a_percentage_while_it_runs(
    new_page: Any, server: Server, shared_data: Path, tmp_path: Path
) -> None:
    data = tmp_path / "many.jsonl"
    data.write_bytes((shared_data / "gsm8k" / "test.jsonl").read_bytes() * 40)  # 52,760 rows
    page = new_page()
    _offered(page, "#file", data, "gsm8k")
    page.click("#use-match")
    page.fill("#dataset-id", "many")
    seen: list[str] = []
    page.expose_function("recordProgress", lambda text: seen.append(text))
    page.evaluate(
        """() => {
            const bar = document.getElementById("progress");
            const text = document.getElementById("progress-text");
            const record = () => recordProgress(`${text.textContent} | ${bar.value}/${bar.max}`);
            new MutationObserver(record).observe(text, {childList: true});
        }"""
    )
    page.click("#import-btn")
    running = page.locator("#progress-text")
    expect(running).to_have_text(re.compile(r"running: .* \(\d+%\)"), timeout=60_000)
    shot(page, server, "import-progress")
    page.set_viewport_size({"width": 390, "height": 844})
    page.locator("#progress-box").scroll_into_view_if_needed()
    page.screenshot(path=str(SCREENSHOTS / f"{server.backend}-import-progress-phone.png"))
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.wait_for_url(re.compile(r"/datasets/many\?v=1\.0\.0$"), timeout=120_000)
    percents = [re.search(r"running: .*\((\d+)%\) \| ([\d.]+)/100$", t) for t in seen]
    shown = [(int(m[1]), float(m[2])) for m in percents if m]
    assert shown, seen
    assert all(pct <= value < pct + 1 for pct, value in shown), shown  # the bar says the same
    assert any(0 < pct < 100 for pct, _ in shown), shown
    assert [pct for pct, _ in shown] == sorted(pct for pct, _ in shown)
    assert not any("of " in t.split("|")[0] for t in seen if "running" in t)  # no row total
