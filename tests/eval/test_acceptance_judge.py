"""Acceptance (issue 10, SPEC H.5, H.8): a judge at run level, on SQLite and PostgreSQL.

Four prompt cases with two milestones each are answered by a python harness and graded by a
``judge`` grader (two criteria) against the local OpenAI-compatible server, which gives a
different, known verdict per case. Rescoring with the same judge must come from the verdict
cache (no model call); a changed rubric must ask the model once per case. A verdict another
process caches at the same moment (two rescores, or a run and a rescore) is no error.
"""

from __future__ import annotations

import json
import re
import threading
import time
from typing import Any

import pytest

from benchbook.contracts import Dataset
from benchbook.contracts.dataset import GraderSpec
from benchbook.contracts.run import RunSettings, StartRunRequest
from benchbook.services import datasets as ds
from benchbook.services import run_execution, run_results, runs, scorecards
from benchbook.services.context import Context
from benchbook.services.secrets import set_secret
from benchbook.services.verdict_cache import StoreVerdictCache
from benchbook.store import judge_verdicts
from tests.eval.test_runs import python_harness, rctx  # noqa: F401 (fixture)
from tests.openaiserver import OpenAIServer, last_user_text
from tests.openaiserver.allow import allow_endpoint, hosts_of

N_CASES = 4
CRITERIA = ("correct", "shows_work")
MILESTONES = ("reads", "adds")


def judged_sums() -> Dataset:
    """``j0..j3``: task ``What is i+1?``, expected ``i+1``, milestones ``reads`` and ``adds``."""
    cases = [
        {
            "id": f"j{i}",
            "env": {"kind": "prompt"},
            "task": f"What is {i}+1?",
            "expected": str(i + 1),
            "milestones": [
                {"id": "reads", "description": f"reads the number {i}"},
                {"id": "adds", "description": "adds one to it"},
            ],
        }
        for i in range(N_CASES)
    ]
    return Dataset.model_validate({"id": "judged", "version": "1.0.0", "cases": cases})


def verdicts(i: int) -> dict[str, bool]:
    """The server's verdict on case ``j<i>`` for each criterion and milestone."""
    return {
        "correct": i % 2 == 0,
        "shows_work": i < 3,
        "reads": True,
        "adds": i in (1, 3),
    }


def judge_reply(body: dict[str, Any]) -> dict[str, Any]:
    found = re.search(r"What is (\d+)\+1\?", last_user_text(body))
    assert found is not None, "the judge prompt holds the task"
    i = int(found.group(1))
    v = verdicts(i)
    return {
        "criteria": [{"id": c, "passed": v[c], "reasoning": f"{c} of j{i}"} for c in CRITERIA],
        "milestones": [{"id": m, "passed": v[m], "reasoning": f"{m} of j{i}"} for m in MILESTONES],
        "passed": all(v[c] for c in CRITERIA),
    }


def judge(base_url: str, shows_work: str = "the answer states how it was found") -> GraderSpec:
    rubric = {
        "criteria": [
            {"id": "correct", "description": "the final answer equals the reference"},
            {"id": "shows_work", "description": shows_work},
        ]
    }
    config = {
        "name": "ref",
        "rubric": rubric,
        "base_url": base_url,
        "model": "gpt-4o-mini",
        "api_key_secret": "JUDGE_KEY",
    }
    return GraderSpec(id="judge", config=config)


def test_a_judge_gives_four_metrics_per_case_and_rescoring_reuses_its_verdicts(
    rctx: Context,  # noqa: F811
    openai_server: OpenAIServer,
) -> None:
    openai_server.reply = judge_reply
    openai_server.api_key = "sk-judge"
    set_secret(rctx, "JUDGE_KEY", "sk-judge", "user", hosts_of(openai_server.url))
    allow_endpoint(rctx, openai_server.url)
    ds.register_dataset(rctx, judged_sums())
    request = StartRunRequest(
        dataset="judged",
        harness=python_harness(rctx, "add"),
        graders=[judge(openai_server.url)],
        settings=RunSettings(concurrency=4),
    )
    run = run_execution.execute_run(rctx, runs.start_run(rctx, request).id)
    assert (run.status, run.counts.done, run.counts.error) == ("finished", N_CASES, 0)
    assert openai_server.call_count == N_CASES
    assert all("response_format" in body for body in openai_server.requests)

    expected_metrics = [f"judge:ref:{c}" for c in CRITERIA] + [
        f"judge:ref:milestone:{m}" for m in MILESTONES
    ]
    for result in run_results.list_run_results(rctx, run.id):
        i = int(result.case_id[1:])
        v = verdicts(i)
        assert [s.metric for s in result.scores] == expected_metrics
        assert [s.status for s in result.scores] == ["ok"] * 4
        got = {s.metric.rsplit(":", 1)[1]: s.value == 1.0 for s in result.scores}
        assert got == v
        assert [s.passed for s in result.scores] == [v["correct"], v["shows_work"], None, None]
        assert result.scores[0].detail["reasoning"] == f"correct of j{i}"
        assert result.passed is (v["correct"] and v["shows_work"])

    assert run.scorecard_id is not None
    first = scorecards.get_scorecard(rctx, run.scorecard_id)
    assert (first.n, first.passed) == (N_CASES, 2)  # j0 and j2 pass both criteria
    assert first.metrics["judge:ref:milestone:adds"].mean == pytest.approx(0.5)
    assert first.metrics["judge:ref:shows_work"].mean == pytest.approx(0.75)

    same = scorecards.rescore_run(rctx, run.id, [judge(openai_server.url)])
    assert openai_server.call_count == N_CASES  # every verdict came from the cache
    assert (same.n, same.passed, same.pass_rate) == (first.n, first.passed, first.pass_rate)
    assert same.metrics == first.metrics
    assert same.plan_hash == first.plan_hash and same.id != first.id

    changed = judge(openai_server.url, shows_work="the answer explains each step")
    other = scorecards.rescore_run(rctx, run.id, [changed])
    assert openai_server.call_count == 2 * N_CASES  # one new call per case
    assert other.plan_hash != first.plan_hash
    assert other.metrics == first.metrics  # the server's verdicts did not change
    assert scorecards.get_scorecard(rctx, first.id) == first


def test_a_verdict_another_process_caches_at_the_same_moment_is_kept_without_an_error(
    rctx: Context,  # noqa: F811
) -> None:
    verdict = judge_reply({"messages": [{"role": "user", "content": "What is 0+1?"}]})
    keys = ("j" * 64, "i" * 64)
    cache = StoreVerdictCache(rctx.engine, rctx.workspace)
    failures: list[BaseException] = []

    def put() -> None:
        try:
            cache.put(*keys, verdict)
        except BaseException as exc:
            failures.append(exc)

    with rctx.engine.connect() as other:
        with other.begin():  # another process caches the same verdict, not yet committed
            judge_verdicts.put_verdict(other, rctx.workspace, *keys, json.dumps(verdict))
            racing = threading.Thread(target=put)
            racing.start()
            time.sleep(0.3)  # the racing put has looked the key up and waits to insert
        racing.join(timeout=30)
    assert failures == []
    assert cache.get(*keys) == verdict
