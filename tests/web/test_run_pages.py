"""Run pages in a real browser (SPEC G, H.4–H.6): the runs list with its filters, a run page
(live progress to 100%, the scorecard, cases filtered, searched and paged), a case's trace
beside its labelled gold, the datasets list's run columns, a viewer reading everything and
another workspace's run answering 404. Screenshots of each page at 1280×800 and 390×844.

The server runs without its run worker: this module executes the runs itself (the python
harnesses live in the test tree, which the server process cannot import).
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from sqlalchemy import update

from benchbook.contracts import Dataset
from benchbook.contracts.run import EnvSnapshot, RunSettings, StartRunRequest, Trace
from benchbook.contracts.score import Score
from benchbook.services import accounts, run_execution, runs, scorecards, traces
from benchbook.services import datasets as ds
from benchbook.services.auth import authenticate_api_key
from benchbook.services.context import Context, local_admin_context
from benchbook.services.keys import create_api_key
from benchbook.settings import Settings
from benchbook.store.engine import make_engine
from benchbook.store.tables import case_results, scorecard_scores
from tests.eval.test_runs import arithmetic, python_harness
from tests.web.conftest import SCREENSHOTS, Server, log_in, serve
from tests.web.test_pages import _severe

N_CASES = 60  # more than one page of cases (50)
DIFF = """diff --git a/plan.md b/plan.md
new file mode 100644
index 0000000..3b18e51
--- /dev/null
+++ b/plan.md
@@ -0,0 +1,2 @@
+Day 1: Paris
+Day 2: Lyon
diff --git a/app.py b/app.py
--- a/app.py
+++ b/app.py
@@ -1,2 +1,2 @@
 import os
-print('old')
+print('new')
"""


@pytest.fixture(scope="module")
def server(
    web_database: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """``benchbook serve`` without its run worker (runs stay as this module leaves them)."""
    home = tmp_path_factory.mktemp("home")
    with serve(web_database, home, {"BENCHBOOK_RUN_WORKER": "false"}) as running:
        yield running


def _in_thread(fn: Any, *args: Any) -> Any:
    # Playwright's sync API keeps an event loop in this thread; execute_run starts its own.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(fn, *args).result()


def _png(browser: Any) -> str:
    """A real PNG (a rendered page) as base64, to stand for a browser case's screenshot."""
    page = browser.new_page(viewport={"width": 320, "height": 160})
    page.set_content(
        "<body style='margin:0;background:#2f4fc9;color:#fff;font:28px sans-serif'>"
        "<p style='padding:40px'>Checkout done ✓</p></body>"
    )
    data = page.screenshot()
    page.close()
    return base64.b64encode(data).decode()


def _plans_case() -> Dataset:
    return Dataset.model_validate(
        {
            "id": "plans",
            "version": "1.0.0",
            "cases": [
                {
                    "id": "trip/paris-1",
                    "env": {"kind": "prompt"},
                    "task": "What is 2+2? Then plan a trip.",
                    "expected": "GOLD-ANSWER-4",
                    "milestones": [{"id": "m1", "description": "Visits Lyon on day 2"}],
                    "metadata": {"secret_route": "Paris→Lyon", "level": 1},
                    "gold_fields": ["secret_route"],
                    "graders": [{"id": "numeric"}],
                }
            ],
        }
    )


def _enrich_trace(ctx: Context, run: Any, png: str) -> None:
    """Replace the stored trace and scores of the plans run's one result with everything a
    trace page shows (messages, a tool call, a diff, a screenshot, tails, judge criteria)."""
    trace = Trace(
        messages=[
            {"role": "system", "content": "You are a travel agent."},
            {"role": "user", "content": "What is 2+2? Then plan a trip."},
            {"role": "assistant", "content": "4 — and the plan is in plan.md"},
        ],
        tool_calls=[{"name": "write_file", "arguments": {"path": "plan.md"}}],
        answer="4",
        duration_ms=1234,
        env_snapshot=EnvSnapshot(diff=DIFF, screenshot=png, url="http://127.0.0.1/done"),
        stdout_tail="wrote plan.md\n",
        stderr_tail="warning: slow network\n",
    )
    blob, path, sha = traces.encode_trace(ctx.settings, trace)
    scores = [
        Score(grader="numeric", metric="numeric", value=1.0, passed=True),
        Score(
            grader="judge",
            metric="judge:planner:feasible",
            value=1.0,
            passed=True,
            detail={"reasoning": "Both days are reachable by train.", "model": "m"},
        ),
        Score(
            grader="judge",
            metric="judge:planner:milestone:m1",
            value=0.0,
            passed=False,
            detail={"reasoning": "Lyon is on day 2 but no hotel is booked.", "model": "m"},
        ),
    ]
    dumped = orjson.dumps([s.model_dump(mode="json") for s in scores]).decode()
    with ctx.engine.begin() as conn:
        conn.execute(
            update(case_results)
            .where(case_results.c.run_id == run.id)
            .values(trace=blob, trace_path=path, trace_sha256=sha, answer="4")
        )
        conn.execute(
            update(scorecard_scores)
            .where(scorecard_scores.c.scorecard_id == run.scorecard_id)
            .values(scores=dumped)
        )


@pytest.fixture(scope="module")
def seeded(
    server: Server,
    web_database: tuple[str, str],
    tmp_path_factory: pytest.TempPathFactory,
    browser: Any,
) -> Iterator[dict[str, Any]]:
    """``sums`` (60 cases): a finished ``add`` run tagged ``baseline`` (all pass), a finished
    ``explode`` run (6 errors), a queued run; ``plans`` with one rich trace; another
    workspace with a run of its own."""
    engine = make_engine(web_database[1])
    home = Path(tmp_path_factory.mktemp("runs"))
    root = local_admin_context(engine, Settings(home=home, database_url=web_database[1]))
    ds.register_dataset(root, arithmetic("sums", n=N_CASES))
    ds.register_dataset(root, _plans_case())
    add, explode, slow = (python_harness(root, f) for f in ("add", "explode", "slow"))
    key = create_api_key(root, "web", "admin", user="admin@example.org").key
    ada = Context(authenticate_api_key(engine, key), engine, root.settings)

    def finished(harness: str, dataset: str = "sums") -> Any:
        started = runs.start_run(ada, StartRunRequest(dataset=dataset, harness=harness))
        return _in_thread(run_execution.execute_run, ada, started.id)

    good, bad, plans = finished(add), finished(explode), finished(add, "plans")
    scorecards.set_scorecard_tags(ada, good.scorecard_id, ["baseline"])
    _enrich_trace(root, plans, _png(browser))
    queued = runs.start_run(ada, StartRunRequest(dataset="sums", harness=slow))

    accounts.create_workspace(root, "elsewhere", "Elsewhere")
    there = accounts.in_workspace(root, "elsewhere")
    ds.register_dataset(there, arithmetic("sums", n=2))
    python_harness(there, "add")
    hidden = runs.start_run(there, StartRunRequest(dataset="sums", harness=add))
    yield {
        "ada": ada,
        "good": good,
        "bad": bad,
        "plans": plans,
        "queued": queued,
        "hidden": hidden,
        "slow": slow,
    }
    engine.dispose()


def _shots(page: Any, server: Server, name: str) -> None:
    """Screenshots at 1280×800 and 390×844 (whole pages); at 390 the page never scrolls
    sideways; axe finds no serious or critical accessibility issue."""
    assert _severe(page) == [], name
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.screenshot(path=str(SCREENSHOTS / f"{server.backend}-{name}.png"), full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=str(SCREENSHOTS / f"{server.backend}-{name}-390.png"), full_page=True)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"{name} scrolls sideways at 390 px ({width} px wide)"
    page.set_viewport_size({"width": 1280, "height": 800})


def _cases(page: Any) -> list[str]:
    return page.eval_on_selector_all(
        "[data-testid=cases] tbody tr", "rows => rows.map(r => r.dataset.case)"
    )


def _runs(page: Any) -> list[str]:
    return page.eval_on_selector_all(
        "[data-testid=runs] tbody tr", "rows => rows.map(r => r.dataset.run)"
    )


def test_the_runs_list_filters_by_dataset_harness_and_status(
    new_page: Any, server: Server, seeded: dict[str, Any]
) -> None:
    page = new_page()
    log_in(page, "viewer@example.org")
    page.click("nav[aria-label=Main] >> text=Runs")
    page.wait_for_url("**/runs")
    ids = {k: seeded[k].id for k in ("good", "bad", "plans", "queued")}
    assert _runs(page) == [ids["queued"], ids["plans"], ids["bad"], ids["good"]]
    assert seeded["hidden"].id not in page.content()  # another workspace's run
    row = " ".join(page.locator(f"tr[data-run={ids['bad']}]").inner_text().split())
    assert "sums@1.0.0 explode@1.0.0 finished 90.0% [79.9%, 95.3%]" in row
    assert "Ada Admin" in row
    _shots(page, server, "runs-list")

    page.fill("#f-harness", "explode")
    page.click("form[role=search] button[type=submit]")
    page.wait_for_url("**harness=explode**")
    assert _runs(page) == [ids["bad"]]
    page.goto("/runs?dataset=plans")
    assert _runs(page) == [ids["plans"]]
    page.goto("/runs")
    page.select_option("#f-status", "queued")  # applies at once
    page.wait_for_url("**status=queued**")
    assert _runs(page) == [ids["queued"]]
    page.goto("/runs?dataset=nothing-here")
    assert "No run matches" in page.inner_text("main")
    assert page.external == []


def test_a_run_page_shows_the_scorecard_and_filters_searches_and_pages_its_cases(
    new_page: Any, server: Server, seeded: dict[str, Any]
) -> None:
    bad = seeded["bad"]
    page = new_page()
    log_in(page, "viewer@example.org")
    page.goto(f"/runs/{bad.id}")
    card = " ".join(page.locator(".scorecard").first.inner_text().split())
    assert "90.0% pass rate · 95% CI [79.9%, 95.3%] (wilson)" in card
    assert "54/60 passed" in card and "6 errored" in card
    assert page.locator(".metrics-table th[scope=row]").all_inner_texts() == ["numeric"]
    assert page.locator("#run-actions").count() == 1
    assert len(_cases(page)) == 50
    _shots(page, server, "run-page")

    page.click("#cases a[data-outcome=failed]")
    errored = ["c1", "c11", "c21", "c31", "c41", "c51"]
    assert _cases(page) == errored
    assert "ValueError: cannot do c1" in page.locator("tr[data-case=c1]").inner_text()
    page.click("#cases a[data-outcome=errored]")
    assert _cases(page) == errored
    page.fill("#case-q", "5")
    page.click("#cases form button[type=submit]")
    assert _cases(page) == ["c51"]  # errored and containing 5
    page.click("#cases a[data-outcome=all]")
    assert _cases(page) == [f"c{i}" for i in range(N_CASES) if "5" in str(i)]  # search kept

    page.goto(f"/runs/{bad.id}?baseline=baseline#cases")
    page.click("#cases a[data-outcome=regressed]")
    assert _cases(page) == errored
    page.click("#cases a[data-outcome=fixed]")
    assert "No case matches" in page.inner_text("[data-testid=no-cases]")

    page.goto(f"/runs/{bad.id}")
    page.click("#cases a[rel=next]")
    assert _cases(page) == [f"c{i}" for i in range(50, 60)]
    page.click("#cases >> text=← First page")
    assert _cases(page)[:2] == ["c0", "c1"]
    assert page.external == []


def test_the_run_page_follows_a_running_run_to_100_percent(
    new_page: Any, server: Server, seeded: dict[str, Any]
) -> None:
    ada, slow = seeded["ada"], seeded["slow"]
    settings = RunSettings(limit=8, concurrency=2)  # 4 rounds of 0.2 s
    started = runs.start_run(ada, StartRunRequest(dataset="sums", harness=slow, settings=settings))
    page = new_page()
    log_in(page, "admin@example.org")
    page.goto(f"/runs/{started.id}")
    assert page.inner_text("[data-live=percent]") == "0.0"
    assert page.inner_text("[data-testid=run-status]") == "queued"
    assert page.locator(".scorecard").count() == 0
    _shots(page, server, "run-page-queued")
    with ThreadPoolExecutor(1) as pool:
        done = pool.submit(run_execution.execute_run, ada, started.id)
        # the poll reloads the page when the run has ended: the scorecard appears by itself
        page.locator(".scorecard").wait_for(timeout=30_000)
        assert done.result().status == "finished"
    assert page.inner_text("[data-live=percent]") == "100.0"
    assert page.inner_text("[data-testid=run-status]") == "finished"
    assert " ".join(page.inner_text("[data-live=done]").split()) == "8"
    assert page.request.get(f"/runs/{started.id}/progress.json").json()["percent"] == 100.0
    anonymous = httpx.get(f"{server.url}/runs/{started.id}/progress.json")
    assert anonymous.status_code == 401  # the poll needs the session like the page


def test_a_case_trace_shows_answer_messages_diff_screenshot_tails_and_scores_beside_the_gold(
    new_page: Any, server: Server, seeded: dict[str, Any]
) -> None:
    plans = seeded["plans"]
    page = new_page()
    log_in(page, "viewer@example.org")
    page.goto(f"/runs/{plans.id}")
    page.click("[data-testid=cases] a >> text=trip/paris-1")
    page.wait_for_url("**/cases/trip/paris-1?sample=0")
    assert page.inner_text("[data-testid=answer]") == "4"
    gold = page.locator("[data-testid=gold]")
    assert "Gold" in gold.locator("h2").inner_text()
    assert "never shown to the harness" in gold.locator("h2").inner_text().lower()
    assert gold.locator("[data-testid=expected]").inner_text() == "GOLD-ANSWER-4"
    assert "Visits Lyon on day 2" in gold.inner_text()
    assert "Paris→Lyon" in gold.inner_text()  # the gold metadata field
    assert "level" not in gold.inner_text()  # a non-gold metadata key is not gold
    main = page.locator(".trace-main")
    assert "You are a travel agent." in main.inner_text()
    assert "write_file" in main.inner_text()
    assert page.locator(".dl-add").all_inner_texts() == [
        "+Day 1: Paris",
        "+Day 2: Lyon",
        "+print('new')",
    ]
    assert page.locator(".dl-del").all_inner_texts() == ["-print('old')"]
    assert page.locator(".dl-hunk").count() == 2
    shot = page.locator("[data-testid=screenshot]")
    assert shot.evaluate("img => img.naturalWidth") == 320  # the PNG decoded
    assert page.inner_text("[data-testid=stdout]") == "wrote plan.md\n"
    assert "slow network" in page.inner_text("[data-testid=stderr]")
    reasons = page.locator("[data-testid=reasoning]").all_inner_texts()
    assert any("Both days are reachable by train." in r for r in reasons)
    assert any("no hotel is booked" in r for r in reasons)
    metrics = page.eval_on_selector_all(".score", "els => els.map(e => e.dataset.metric)")
    assert metrics == ["numeric", "judge:planner:feasible", "judge:planner:milestone:m1"]
    _shots(page, server, "run-case-trace")

    bad = seeded["bad"]
    page.goto(f"/runs/{bad.id}?outcome=errored")
    page.click("[data-testid=cases] a >> text=c11")
    assert "ValueError: cannot do c11" in page.inner_text(".alert.danger")
    assert page.inner_text("[data-testid=expected]") == "12"
    _shots(page, server, "run-case-errored")
    assert page.external == []


def test_the_datasets_list_shows_runs_and_the_last_pass_rate(
    new_page: Any, server: Server, seeded: dict[str, Any]
) -> None:
    page = new_page()
    log_in(page, "viewer@example.org")
    row = page.locator("tr", has=page.locator("a.strong >> text=sums"))
    # 4 runs of sums by now at least (good, bad, queued, and the followed one when it ran)
    assert int(row.locator("[data-col=runs]").inner_text()) >= 3
    last = row.locator("[data-col=last-pass-rate] a")
    assert last.inner_text() in ("100.0%", "90.0%")
    plans = page.locator("tr", has=page.locator("a.strong >> text=plans"))
    assert plans.locator("[data-col=runs]").inner_text() == "1"
    _shots(page, server, "datasets-with-runs")
    plans.locator("[data-col=last-pass-rate] a").click()
    page.wait_for_url(f"**/runs/{seeded['plans'].id}")


def test_another_workspaces_run_is_not_found_on_every_run_page(
    new_page: Any, server: Server, seeded: dict[str, Any]
) -> None:
    hidden = seeded["hidden"].id
    page = new_page()
    log_in(page, "admin@example.org")
    for path in (f"/runs/{hidden}", f"/runs/{hidden}/cases/c0?sample=0"):
        answer = page.goto(path)
        assert answer is not None and answer.status == 404, path
        assert "not found" in page.inner_text("main").lower()
    answer = page.request.get(f"/runs/{hidden}/progress.json")
    assert answer.status == 404
    answer = page.goto(f"/runs/{seeded['bad'].id}/cases/c99?sample=0")
    assert answer is not None and answer.status == 404
    answer = page.goto(f"/runs/{seeded['bad'].id}?after=zz")
    assert answer is not None and answer.status == 400
