"""Issue 28 at the service level, on SQLite and PostgreSQL: an ``openai`` harness endpoint that
does not answer refuses the run before anything is stored; summaries stored before grader errors
existed keep reading; the datasets list's last pass rate skips a run whose every pair errored;
resume's new budget over HTTP."""

from __future__ import annotations

import socket

import orjson
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update

from benchbook.app import create_app
from benchbook.contracts.run import RunSettings, StartRunRequest
from benchbook.errors import UpstreamError
from benchbook.services import datasets as ds
from benchbook.services import endpoints, harnesses, run_execution, runs
from benchbook.services.context import Context
from benchbook.store import scorecards as store_scorecards
from benchbook.store.tables import scorecards as scorecard_table
from tests.eval.test_runs import arithmetic, python_harness, rctx  # noqa: F401 (fixture)
from tests.openaiserver import OpenAIServer


def _closed_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/v1"


def _openai_harness(ctx: Context, base_url: str) -> str:
    endpoints.add_endpoint(ctx, "llm", base_url)  # model endpoints are admin-registered
    body = {
        "id": "llm",
        "version": "1.0.0",
        "kind": "openai",
        "config": {"base_url": base_url, "model": "test-model"},
    }
    harnesses.register_harness(ctx, harnesses.parse_harness(body))
    return "llm@1.0.0"


def test_an_openai_harness_endpoint_that_does_not_answer_refuses_the_run_naming_it(
    rctx: Context,  # noqa: F811
    openai_server: OpenAIServer,
) -> None:
    ds.register_dataset(rctx, arithmetic("sums", n=3))
    url = _closed_url()
    request = StartRunRequest(dataset="sums", harness=_openai_harness(rctx, url))
    with pytest.raises(UpstreamError) as caught:
        runs.start_run(rctx, request)
    assert caught.value.message.startswith(f"preflight: harness llm endpoint GET {url}/models")
    assert caught.value.details["url"] == f"{url}/models"
    assert runs.list_runs(rctx) == []  # nothing stored
    skipped = runs.start_run(rctx, request.model_copy(update={"preflight": False}))
    run = run_execution.execute_run(rctx, skipped.id)
    assert (run.status, run.counts.error) == ("failed", 3)  # every pair errored: failed
    assert run.error is not None and f"(POST {url}/chat/completions)" in run.error
    assert [(e.kind, e.count) for e in run.top_errors] == [("harness", 3)]


def test_summaries_stored_before_grader_errors_keep_reading_and_failed_runs_give_no_last_rate(
    rctx: Context,  # noqa: F811
) -> None:
    ds.register_dataset(rctx, arithmetic("sums", n=4))
    good = runs.start_run(
        rctx, StartRunRequest(dataset="sums", harness=python_harness(rctx, "add"))
    )
    good = run_execution.execute_run(rctx, good.id)
    with rctx.engine.begin() as conn:  # a summary as written before migration 0014
        head = store_scorecards.get_scorecard(conn, good.scorecard_id)
        old = orjson.loads(head.summary)
        for key in ("grader_errors", "judge_tokens_input", "judge_tokens_output", "judge_cost_usd"):
            old.pop(key)
        conn.execute(
            update(scorecard_table)
            .where(scorecard_table.c.id == good.scorecard_id)
            .values(summary=orjson.dumps(old).decode())
        )
    again = runs.get_run(rctx, good.id)
    assert (again.counts.passed, again.counts.grader_errors, again.pass_rate) == (4, 0, 1.0)

    bad = StartRunRequest(
        dataset="sums", harness=python_harness(rctx, "explode_all"), settings=RunSettings()
    )
    failed = run_execution.execute_run(rctx, runs.start_run(rctx, bad).id)
    assert failed.status == "failed"
    summary = runs.summarize_dataset_runs(rctx, ["sums"])["sums"]
    assert (summary.runs, summary.last_run_id, summary.last_pass_rate) == (2, good.id, 1.0)


def test_resume_over_http_takes_a_new_budget_and_records_it(
    rctx: Context,  # noqa: F811
) -> None:
    ds.register_dataset(rctx, arithmetic("sums", n=4))
    request = StartRunRequest(
        dataset="sums",
        harness=python_harness(rctx, "priced"),  # $1 a case
        settings=RunSettings(concurrency=1, budget_usd=1.0),
    )
    run = run_execution.execute_run(rctx, runs.start_run(rctx, request).id)
    assert (run.status, run.counts.done, run.counts.not_run) == ("budget_exhausted", 1, 3)
    with TestClient(create_app(rctx.settings, engine=rctx.engine)) as http:
        refused = http.post(f"/api/runs/{run.id}/resume", json={"budget_usd": -1})
        assert refused.status_code in (400, 422), refused.text
        queued = http.post(f"/api/runs/{run.id}/resume", json={"budget_usd": 2.0})
        assert queued.status_code == 200, queued.text
        caps = queued.json()["budget_caps"]
        assert [(c["budget_usd"], c["spent_before_usd"]) for c in caps] == [(2.0, 1.0)]
        assert caps[0]["set_by"] == rctx.principal.user_id
    done = run_execution.execute_run(rctx, run.id)
    assert (done.status, done.counts.done, done.counts.not_run) == ("budget_exhausted", 3, 1)
    assert done.spent_usd == 3.0


def test_every_grader_id_has_one_config_schema() -> None:
    """The plan checks and the OpenAPI rules cover exactly the graders this installation runs."""
    from benchbook.contracts.dataset import GRADER_IDS
    from benchbook.contracts.graders import GRADER_CONFIGS

    assert set(GRADER_CONFIGS) == set(GRADER_IDS)
