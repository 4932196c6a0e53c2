"""Issue 28 acceptance through ``benchbook``: graders fail closed, plans are checked before any
case runs, every failure is counted and named — on SQLite and PostgreSQL, against the local
OpenAI-compatible server.

Ten GSM8K-like cases whose expected answers are 10..19 are answered ``FINAL ANSWER: 18`` by a
python harness, so ``numeric`` alone passes exactly one (c8). Each test asserts the exact
counts and the exit code.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.cli.conftest import invoke
from tests.openaiserver import OpenAIServer

pytestmark = pytest.mark.both_backends  # issue 28: each observation on both backends
N = 10
CRITERIA = [
    {"id": "correct", "description": "the answer equals the reference"},
    {"id": "concise", "description": "the answer is one line"},
]


def _setup(cli_env: dict[str, str], tmp_path: Path, harness: str = "final_18") -> None:
    cases = [
        {"id": f"c{i}", "env": {"kind": "prompt"}, "task": f"Q{i}", "expected": str(10 + i)}
        for i in range(N)
    ]
    dataset = tmp_path / "gsm.json"
    dataset.write_bytes(orjson.dumps({"id": "gsm", "version": "1.0.0", "cases": cases}))
    spec = {
        "id": harness.replace("_", "-"),
        "version": "1.0.0",
        "kind": "python",
        "config": {"callable": f"tests.eval.harnesses.agents:{harness}"},
    }
    path = tmp_path / "harness.json"
    path.write_bytes(orjson.dumps(spec))
    assert invoke(cli_env, "register", str(dataset)).exit_code == 0
    assert invoke(cli_env, "harnesses", "register", str(path)).exit_code == 0


def endpoint(cli_env: dict[str, str], url: str) -> None:
    """Register ``url`` as a model endpoint of the workspace (judges may call only those)."""
    result = invoke(cli_env, "endpoints", "add", "judge", url)
    assert result.exit_code == 0, result.output


def judge(base_url: str, **config: Any) -> str:
    body = {"rubric": {"criteria": CRITERIA}, "base_url": base_url, "model": "judge-model"}
    return "judge=" + json.dumps({**body, **config})


def closed_url() -> str:
    """An endpoint nothing listens on (a port just closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def run_json(cli_env: dict[str, str], *args: str) -> tuple[int, dict[str, Any]]:
    result = invoke(cli_env, "run", "gsm", "--harness", "final-18", "--json", *args)
    return result.exit_code, orjson.loads(result.stdout)


def scorecard(cli_env: dict[str, str], card_id: str) -> dict[str, Any]:
    card: dict[str, Any] = orjson.loads(invoke(cli_env, "runs", "scorecard", card_id).stdout)
    return card


def test_numeric_alone_passes_one_case_in_ten_and_exits_zero(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    _setup(cli_env, tmp_path)
    code, run = run_json(cli_env, "-g", "numeric")
    assert code == 0
    assert (run["counts"]["passed"], run["counts"]["grader_errors"]) == (1, 0)


def test_a_judge_that_answers_no_verdict_makes_every_case_a_grader_error_and_exits_1(
    cli_env: dict[str, str], tmp_path: Path, openai_server: OpenAIServer
) -> None:
    _setup(cli_env, tmp_path)
    endpoint(cli_env, openai_server.url)
    openai_server.reply = lambda body: "Looks fine to me."
    code, run = run_json(cli_env, "-g", "numeric", "-g", judge(openai_server.url))
    assert code == 1
    c = run["counts"]
    assert (c["done"], c["ok"], c["error"], c["grader_errors"], c["passed"]) == (N, N, 0, N, 0)
    assert run["pass_rate"] is None  # nothing was judged: never 10% as if it had been
    card = scorecard(cli_env, run["scorecard_id"])
    assert (card["n"], card["passed"], card["grader_errors"], card["errors"]) == (N, 0, N, 0)
    assert [(e["kind"], e["count"]) for e in run["top_errors"]] == [("grader", N)]
    assert "unparseable judge reply from judge-model at " in run["top_errors"][0]["error"]
    # the text output says so too, and --allow-grader-errors accepts it
    text = invoke(
        cli_env, "run", "gsm", "--harness", "final-18", "-g", "numeric", "-g",
        judge(openai_server.url), "--allow-grader-errors",
    )  # fmt: skip
    assert text.exit_code == 0, text.output
    out = " ".join(text.stdout.split())
    assert "10 grader errors" in out
    assert "no pass rate: every graded pair is a grader error; 10 grader errors" in out


def test_a_judge_reply_missing_a_criterion_is_a_grader_error_on_every_case(
    cli_env: dict[str, str], tmp_path: Path, openai_server: OpenAIServer
) -> None:
    _setup(cli_env, tmp_path)
    endpoint(cli_env, openai_server.url)
    openai_server.reply = lambda body: {
        "criteria": [{"id": "correct", "passed": True, "reasoning": "ok"}],
        "milestones": [],
        "passed": True,
    }
    code, run = run_json(cli_env, "-g", "numeric", "-g", judge(openai_server.url))
    assert code == 1
    assert (run["counts"]["grader_errors"], run["counts"]["passed"]) == (N, 0)
    assert run["top_errors"] == [
        {
            "error": "judge:judge:concise: the judge gave no verdict for criterion 'concise'",
            "count": N,
            "kind": "grader",
        }
    ]
    results = orjson.loads(
        invoke(cli_env, "runs", "results", run["id"], "--outcome", "grader_error", "--json").stdout
    )
    assert len(results) == N and all(r["passed"] is False for r in results)


def test_a_judge_that_is_down_stops_the_run_before_any_case_naming_the_url(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    _setup(cli_env, tmp_path)
    url = closed_url()
    endpoint(cli_env, url)
    result = invoke(
        cli_env, "run", "gsm", "--harness", "final-18", "-g", "numeric", "-g", judge(url)
    )
    assert result.exit_code == 1
    err = " ".join(result.stderr.split())
    assert f"preflight: judge 'judge' endpoint GET {url}/models failed: no answer" in err
    assert orjson.loads(invoke(cli_env, "runs", "list", "--json").stdout) == []  # nothing ran

    code, run = run_json(cli_env, "-g", "numeric", "-g", judge(url), "--no-preflight")
    assert code == 1
    c = run["counts"]
    assert (c["done"], c["error"], c["grader_errors"], c["passed"]) == (N, 0, N, 0)
    assert run["pass_rate"] is None
    cause = run["top_errors"][0]["error"]
    assert cause.startswith("judge:judge:correct: openai: connection error: ")
    assert f"(POST {url}/chat/completions)" in cause


def test_a_judge_without_a_model_or_with_a_misspelled_key_is_refused_by_name(
    cli_env: dict[str, str], tmp_path: Path, openai_server: OpenAIServer
) -> None:
    _setup(cli_env, tmp_path)
    endpoint(cli_env, openai_server.url)
    no_model = "judge=" + json.dumps({"rubric": "is it right?", "base_url": openai_server.url})
    result = invoke(cli_env, "run", "gsm", "--harness", "final-18", "-g", no_model)
    assert result.exit_code == 1
    assert "graders[0] (judge): the judge needs model" in " ".join(result.stderr.split())
    typo = judge(openai_server.url, rubrik="x")
    result = invoke(cli_env, "run", "gsm", "--harness", "final-18", "-g", "numeric", "-g", typo)
    assert result.exit_code == 1
    err = " ".join(result.stderr.split())
    assert "graders[1] (judge): unknown config key 'rubrik' for grader 'judge'; did you mean" in err
    assert "'rubric'?" in err
    assert orjson.loads(invoke(cli_env, "runs", "list", "--json").stdout) == []
    assert openai_server.call_count == 0


def test_a_rescore_with_a_failing_judge_exits_1_and_its_results_are_readable(
    cli_env: dict[str, str], tmp_path: Path, openai_server: OpenAIServer
) -> None:
    _setup(cli_env, tmp_path)
    endpoint(cli_env, openai_server.url)
    code, run = run_json(cli_env, "-g", "numeric")
    assert code == 0
    openai_server.reply = lambda body: "no JSON here"
    rescored = invoke(
        cli_env, "runs", "rescore", run["id"], "-g", "numeric", "-g", judge(openai_server.url),
        "--json",
    )  # fmt: skip
    assert rescored.exit_code == 1
    card = orjson.loads(rescored.stdout)
    assert (card["n"], card["passed"], card["grader_errors"]) == (N, 0, N)
    own = orjson.loads(invoke(cli_env, "runs", "results", run["id"], "--json").stdout)
    assert sum(r["passed"] is True for r in own) == 1
    page = invoke(cli_env, "runs", "results", run["id"], "--scorecard", card["id"], "--json")
    rescored_results = orjson.loads(page.stdout)
    assert [r["passed"] for r in rescored_results] == [False] * N
    assert all(r["grader_error"] for r in rescored_results)
    one = orjson.loads(
        invoke(cli_env, "runs", "trace", run["id"], "c8", "--scorecard", card["id"]).stdout
    )
    assert one["passed"] is False and one["trace"]["answer"] == "FINAL ANSWER: 18"
    assert [s["metric"] for s in one["scores"]][:2] == ["numeric", "judge:judge:correct"]


def test_a_run_whose_every_case_errored_is_failed_and_listed_with_its_errors(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    _setup(cli_env, tmp_path, harness="explode_all")
    result = invoke(cli_env, "run", "gsm", "--harness", "explode-all", "-g", "numeric", "--json")
    assert result.exit_code == 1
    run = orjson.loads(result.stdout)
    assert run["status"] == "failed"
    assert (run["counts"]["error"], run["counts"]["ok"]) == (N, 0)
    assert run["error"].startswith("every (case, sample) errored (10): ")
    listed = orjson.loads(invoke(cli_env, "runs", "list", "--json").stdout)
    assert [(r["status"], r["counts"]["error"]) for r in listed] == [("failed", N)]


@pytest.fixture
def priced_env(cli_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    table = {
        "as_of": "2026-12-01",
        "models": {"test-model": {"input_per_mtok_usd": 1.0, "output_per_mtok_usd": 2.0}},
    }
    (tmp_path / "pricing.json").write_text(json.dumps(table))
    return {**cli_env, "BENCHBOOK_PRICING_FILE": str(tmp_path / "pricing.json")}


def test_a_budget_stopped_run_finishes_once_resume_raises_its_budget(
    priced_env: dict[str, str], tmp_path: Path
) -> None:
    _setup(priced_env, tmp_path, harness="priced_final_18")  # $1 a case
    args = ("run", "gsm", "--harness", "priced-final-18", "-g", "numeric", "--json")
    result = invoke(priced_env, *args, "--concurrency", "1", "--budget-usd", "3")
    run = orjson.loads(result.stdout)
    assert run["status"] == "budget_exhausted"
    assert (run["counts"]["done"], run["counts"]["not_run"]) == (3, 7)
    again = orjson.loads(invoke(priced_env, "runs", "resume", run["id"], "--json").stdout)
    assert (again["status"], again["counts"]["not_run"]) == ("budget_exhausted", 7)
    raised = invoke(priced_env, "runs", "resume", run["id"], "--budget-usd", "5", "--json")
    assert raised.exit_code == 0, raised.output
    done = orjson.loads(raised.stdout)
    assert (done["status"], done["counts"]["not_run"], done["counts"]["done"]) == (
        "budget_exhausted",
        2,
        8,
    )
    final = orjson.loads(
        invoke(priced_env, "runs", "retry", run["id"], "--budget-usd", "10", "--json").stdout
    )
    assert (final["status"], final["counts"]["done"], final["spent_usd"]) == ("finished", N, 10.0)
    assert [
        (c["budget_usd"], c["set_by"], c["spent_before_usd"]) for c in final["budget_caps"]
    ] == [
        (5.0, final["created_by"], 3.0),
        (10.0, final["created_by"], 8.0),
    ]
