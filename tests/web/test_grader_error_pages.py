"""Issue 28 in a real browser: a run with grader errors says so on the runs list, the run page
(counts, top errors by kind, a grader-error filter) and the trace page; a rescore is picked
from the run and trace pages (the newest scorecard first); a judge score shows the request it
sent and the raw reply, with tokens, cost and latency. Screenshots at 1280×800 and 390×844.

The judge is the local OpenAI-compatible server; the runs execute in this process (the
server under test runs no worker: the python harness lives in the test tree).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchbook.contracts import Dataset
from benchbook.contracts.dataset import GraderSpec
from benchbook.contracts.run import RunSettings, StartRunRequest
from benchbook.services import endpoints, run_execution, runs, scorecards
from benchbook.services.auth import authenticate_api_key
from benchbook.services.context import Context, local_admin_context
from benchbook.services.keys import create_api_key
from benchbook.settings import Settings
from benchbook.store.engine import make_engine
from tests.eval.test_runs import python_harness
from tests.openaiserver import OpenAIServer, last_user_text
from tests.web.conftest import Server, log_in, serve
from tests.web.test_run_pages import _in_thread, _shots

N = 10
BROKEN = {"c3", "c5", "c7"}  # the judge answers these with prose, not a verdict


@pytest.fixture(scope="module")
def server(
    web_database: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("home")
    with serve(web_database, home, {"BENCHBOOK_RUN_WORKER": "false"}) as running:
        yield running


def _reply(body: dict[str, Any]) -> Any:
    text = last_user_text(body)
    found = re.search(r"\bQ(\d+)\b", text)
    case = f"c{found.group(1) if found else '?'}"
    if case in BROKEN:
        return "I would say it looks about right."
    verdict = case == "c8"
    return {
        "criteria": [{"id": "correct", "passed": verdict, "reasoning": f"{case}: 18 vs gold"}],
        "milestones": [],
        "passed": verdict,
    }


@pytest.fixture(scope="module")
def seeded(
    server: Server, web_database: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    engine = make_engine(web_database[1])
    home = Path(tmp_path_factory.mktemp("runs"))
    root = local_admin_context(engine, Settings(home=home, database_url=web_database[1]))
    cases = [
        {"id": f"c{i}", "env": {"kind": "prompt"}, "task": f"Q{i}", "expected": str(10 + i)}
        for i in range(N)
    ]
    from benchbook.services import datasets as ds

    ds.register_dataset(
        root, Dataset.model_validate({"id": "gsm", "version": "1.0.0", "cases": cases})
    )
    harness = python_harness(root, "final_18")
    key = create_api_key(root, "web", "admin", user="admin@example.org").key
    ada = Context(authenticate_api_key(engine, key), engine, root.settings)
    with OpenAIServer() as judge_server:
        judge_server.reply = _reply
        endpoints.add_endpoint(root, "judge", judge_server.url)  # judges call registered ones
        judge = GraderSpec(
            id="judge",
            config={
                "name": "ref",
                "rubric": {"criteria": [{"id": "correct", "description": "equals the gold"}]},
                "base_url": judge_server.url,
                "model": "judge-model",
            },
        )
        request = StartRunRequest(
            dataset="gsm",
            harness=harness,
            graders=[GraderSpec(id="numeric"), judge],
            settings=RunSettings(concurrency=2),
        )
        started = runs.start_run(ada, request)
        run = _in_thread(run_execution.execute_run, ada, started.id)
        rescore = scorecards.rescore_run(ada, run.id, [GraderSpec(id="numeric")])
    yield {"run": run, "rescore": rescore}
    engine.dispose()


def test_a_run_with_grader_errors_says_so_on_every_page_and_a_rescore_can_be_picked(
    new_page: Any, server: Server, seeded: dict[str, Any]
) -> None:
    run, rescore = seeded["run"], seeded["rescore"]
    assert (run.counts.grader_errors, run.counts.passed, run.counts.error) == (3, 1, 0)
    page = new_page()
    log_in(page, "viewer@example.org")
    page.goto("/runs")
    row = page.locator(f"tr[data-run={run.id}]")
    assert row.locator("[data-testid=run-grader-errors]").inner_text() == "3 grader"
    _shots(page, server, "issue28-runs-list")

    page.goto(f"/runs/{run.id}")
    cards = page.eval_on_selector_all(
        "section.scorecard", "els => els.map(e => e.dataset.scorecard)"
    )
    assert cards == [rescore.id, run.scorecard_id]  # the newest first
    own = page.locator(f"section[data-scorecard={run.scorecard_id}]")
    assert "3" in own.locator("[data-testid=grader-errors]").inner_text()
    assert page.locator("[data-testid=live-grader-errors]").inner_text() == "3"
    errors = page.locator("[data-testid=top-errors] li").all_inner_texts()
    assert len(errors) == 1 and "grader" in errors[0] and "unparseable judge reply" in errors[0]
    page.click("a.pill[data-outcome=grader_error]")
    page.wait_for_url("**outcome=grader_error**")
    shown = page.eval_on_selector_all(
        "[data-testid=cases] tbody tr", "rows => rows.map(r => r.dataset.case)"
    )
    assert shown == sorted(BROKEN)
    _shots(page, server, "issue28-run-grader-errors")

    page.goto(f"/runs/{run.id}")
    page.click(f"[data-testid=scorecard-picker] a[data-scorecard={rescore.id}]")
    page.wait_for_url(f"**scorecard={rescore.id}**")
    verdicts = page.eval_on_selector_all(
        "[data-testid=cases] tbody tr",
        "rows => rows.map(r => [r.dataset.case, r.querySelector('.verdict').textContent])",
    )
    assert verdicts == [[f"c{i}", "pass" if i == 8 else "fail"] for i in range(N)]
    _shots(page, server, "issue28-rescore-picker")


def test_a_judge_score_shows_its_request_and_raw_reply_on_the_trace_page(
    new_page: Any, server: Server, seeded: dict[str, Any]
) -> None:
    run, rescore = seeded["run"], seeded["rescore"]
    page = new_page()
    log_in(page, "viewer@example.org")
    page.goto(f"/runs/{run.id}/cases/c8?sample=0")
    call = page.locator("[data-testid=judge-call]")
    summary = call.locator("summary").inner_text()
    assert "judge-model" in summary and "in /" in summary
    messages = call.locator("pre.judge-message").all_inner_texts()
    assert len(messages) == 2 and "<<<BEGIN ANSWER " in messages[1]
    assert "FINAL ANSWER: 18" in messages[1]
    assert '"passed": true' in call.locator("[data-testid=judge-reply]").inner_text()
    _shots(page, server, "issue28-judge-call")

    page.goto(f"/runs/{run.id}/cases/c3?sample=0")
    assert "unparseable judge reply" in page.locator("[data-testid=grader-error]").inner_text()
    reply = page.locator("[data-testid=judge-call] [data-testid=judge-reply]").inner_text()
    assert reply == "I would say it looks about right."
    page.click(f"[data-testid=scorecard-picker] a[data-scorecard={rescore.id}]")
    page.wait_for_url(f"**scorecard={rescore.id}**")
    assert page.locator("[data-testid=grader-error]").count() == 0
    assert page.locator("[data-testid=judge-call]").count() == 0
    _shots(page, server, "issue28-trace-rescore")
