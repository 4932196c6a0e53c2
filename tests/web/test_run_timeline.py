"""Runs in the dataset page's activity timeline (SPEC G): runner, harness@version, status, pass
rate and a link, in a real browser, with screenshots at 1280×800 and 390×844.

The server runs without its run worker: the test executes one run itself (the python harness
lives in this test tree, which the server process cannot import) and leaves another queued.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from benchbook.contracts.run import StartRunRequest
from benchbook.services import datasets as ds
from benchbook.services import run_execution, runs
from benchbook.services.auth import authenticate_api_key
from benchbook.services.context import Context, local_admin_context
from benchbook.services.keys import create_api_key
from benchbook.settings import Settings
from benchbook.store.engine import make_engine
from tests.eval.test_runs import arithmetic, python_harness
from tests.web.conftest import SCREENSHOTS, Server, log_in, serve, shot


@pytest.fixture(scope="module")
def server(
    web_database: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """``benchbook serve`` without its run worker (runs stay as this module leaves them)."""
    home = tmp_path_factory.mktemp("home")
    with serve(web_database, home, {"BENCHBOOK_RUN_WORKER": "false"}) as running:
        yield running


@pytest.fixture(scope="module")
def run_ids(
    server: Server, web_database: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, str]]:
    """``sums``@1.0.0 (12 cases) with a finished run of ``explode``@1.0.0 (10 of 12 pass) by
    Ada Admin, then a queued one; ``{"finished": id, "queued": id}``."""
    engine = make_engine(web_database[1])
    home = Path(tmp_path_factory.mktemp("runs"))
    root = local_admin_context(engine, Settings(home=home, database_url=web_database[1]))
    ds.register_dataset(root, arithmetic("sums"))
    harness = python_harness(root, "explode")  # python harnesses: installation admins only
    key = create_api_key(root, "web", "admin", user="admin@example.org").key
    ada = Context(authenticate_api_key(engine, key), engine, root.settings)
    request = StartRunRequest(dataset="sums", harness=harness)
    started = runs.start_run(ada, request)
    # Playwright's sync API keeps an event loop in this thread; execute_run starts its own.
    with ThreadPoolExecutor(1) as pool:
        finished = pool.submit(run_execution.execute_run, ada, started.id).result()
    assert (finished.status, finished.counts.passed) == ("finished", 10)
    queued = runs.start_run(ada, request)
    yield {"finished": finished.id, "queued": queued.id}
    engine.dispose()


def _run_item(page: Any, run_id: str) -> Any:
    return page.locator(f'#activity .tl-run [data-run="{run_id}"]')


def test_the_dataset_timeline_shows_each_run_with_harness_status_pass_rate_and_a_link(
    new_page: Any, server: Server, run_ids: dict[str, str]
) -> None:
    page = new_page()
    log_in(page, "viewer@example.org")  # runs:read is a viewer's right too
    page.goto("/datasets/sums")
    assert page.locator("#activity .tl-run").count() == 2
    done = _run_item(page, run_ids["finished"])
    text = " ".join(done.inner_text().split())
    assert text.startswith("Ada Admin ran explode@1.0.0 on 1.0.0 — finished, pass rate 83.3%")
    assert "(12/12 done)" in text
    assert done.locator(".run-status").get_attribute("class").split()[-1] == "run-finished"
    waiting = " ".join(_run_item(page, run_ids["queued"]).inner_text().split())
    assert "ran explode@1.0.0 on 1.0.0 — queued (0/12 done)" in waiting
    assert "pass rate" not in waiting  # nothing graded yet
    # the timeline runs oldest first: the registration, then the finished run, then the queued
    kinds = page.eval_on_selector_all(
        "#activity .timeline > li", "els => els.map(e => e.className)"
    )
    assert kinds == ["tl tl-registered", "tl tl-run", "tl tl-run"]

    page.locator("#activity").scroll_into_view_if_needed()
    shot(page, server, "dataset-runs-timeline")
    page.set_viewport_size({"width": 390, "height": 844})
    page.locator("#activity").scroll_into_view_if_needed()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{server.backend}-dataset-runs-timeline-390.png"))
    box = done.bounding_box()
    assert box is not None and box["x"] + box["width"] <= 390  # wraps, never scrolls sideways

    link = done.locator("a")
    assert link.get_attribute("href") == f"/api/runs/{run_ids['finished']}"
    link.click()
    run = json.loads(page.locator("body").inner_text())
    assert (run["id"], run["status"], run["harness"]) == (
        run_ids["finished"],
        "finished",
        "explode@1.0.0",
    )
    assert page.external == []
