"""``benchbook harnesses …``, ``benchbook run`` and ``benchbook runs …`` through CliRunner, on
both backends."""

from __future__ import annotations

from pathlib import Path

import orjson
from sqlalchemy import Engine

from benchbook.services.run_worker import RunWorker
from benchbook.settings import Settings
from tests.cli.conftest import invoke
from tests.eval.test_runs import arithmetic


def _setup(cli_env: dict[str, str], tmp_path: Path) -> None:
    dataset = tmp_path / "sums.json"
    dataset.write_bytes(orjson.dumps(arithmetic(n=5).model_dump(mode="json")))
    harness = tmp_path / "add.json"
    harness.write_bytes(
        orjson.dumps(
            {
                "id": "add",
                "version": "1.0.0",
                "kind": "python",
                "config": {"callable": "tests.eval.harnesses.agents:add_wrong_on_odd_samples"},
            }
        )
    )
    assert invoke(cli_env, "register", str(dataset)).exit_code == 0
    result = invoke(cli_env, "harnesses", "register", str(harness))
    assert result.exit_code == 0, result.output
    assert "registered harness add@1.0.0" in result.stdout


def test_run_executes_in_process_and_prints_the_scorecard(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    _setup(cli_env, tmp_path)
    result = invoke(cli_env, "run", "sums@1.0.0", "--harness", "add", "--repeats", "2")
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())  # rich wraps at 80 columns
    assert "finished: add@1.0.0 on sums@1.0.0 — 10/10 done, 0 errors" in out
    assert "pass rate 50.00% (5/10), 95% Wilson [23.66%, 76.34%]" in out
    assert "pass@2 100.00% pass^2 0.00%" in out


def test_runs_list_show_results_trace_and_rescore(cli_env: dict[str, str], tmp_path: Path) -> None:
    _setup(cli_env, tmp_path)
    run = orjson.loads(invoke(cli_env, "run", "sums", "--harness", "add", "--json").stdout)
    listed = orjson.loads(invoke(cli_env, "runs", "list", "--json").stdout)
    assert [r["id"] for r in listed] == [run["id"]]
    results = orjson.loads(invoke(cli_env, "runs", "results", run["id"], "--json").stdout)
    assert [(r["case_id"], r["answer"], r["passed"]) for r in results][:2] == [
        ("c0", "1", True),
        ("c1", "2", True),
    ]
    trace = orjson.loads(invoke(cli_env, "runs", "trace", run["id"], "c1").stdout)
    assert trace["answer"] == "2"
    rescored = invoke(
        cli_env, "runs", "rescore", run["id"], "--grader", 'regex={"pattern": "^[13]$"}'
    )
    assert rescored.exit_code == 0, rescored.output
    assert "pass rate 40.00%" in " ".join(
        rescored.stdout.split()
    )  # answers 1..5: only 1 and 3 match


def test_unknown_graders_and_bad_grader_json_are_one_line_errors(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    _setup(cli_env, tmp_path)
    unknown = invoke(cli_env, "run", "sums", "--harness", "add", "--grader", "nope")
    assert unknown.exit_code == 1 and "unknown grader ids: nope (known:" in unknown.stderr
    bad = invoke(cli_env, "run", "sums", "--harness", "add", "--grader", "regex={oops")
    assert bad.exit_code == 1 and "--grader regex: the config is not JSON" in bad.stderr
    assert orjson.loads(invoke(cli_env, "runs", "list", "--json").stdout) == []


def test_a_run_whose_cases_error_says_why_and_results_print_the_next_cursor(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    _setup(cli_env, tmp_path)
    harness = tmp_path / "boom.json"
    callable_ = "tests.eval.harnesses.agents:explode"
    harness.write_bytes(
        orjson.dumps(
            {"id": "boom", "version": "1.0.0", "kind": "python", "config": {"callable": callable_}}
        )
    )
    invoke(cli_env, "harnesses", "register", str(harness))
    result = invoke(cli_env, "run", "sums", "--harness", "boom")
    out = " ".join(result.stdout.split())
    assert "5/5 done, 1 error," in out and "1 × ValueError: cannot do c1" in out
    run_id = orjson.loads(invoke(cli_env, "runs", "list", "--json").stdout)[0]["id"]
    page = invoke(cli_env, "runs", "results", run_id, "--limit", "2")
    assert "next page: --after 1:0" in page.stdout
    rest = orjson.loads(
        invoke(cli_env, "runs", "results", run_id, "--after", "1:0", "--json").stdout
    )
    assert [r["case_id"] for r in rest] == ["c2", "c3", "c4"]


def test_a_python_harness_whose_module_is_missing_is_refused_when_planning(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    _setup(cli_env, tmp_path)
    harness = tmp_path / "ghost.json"
    config = {"callable": "no_such_package.agents:run"}
    harness.write_bytes(
        orjson.dumps({"id": "ghost", "version": "1.0.0", "kind": "python", "config": config})
    )
    invoke(cli_env, "harnesses", "register", str(harness))
    result = invoke(cli_env, "run", "sums", "--harness", "ghost")
    assert result.exit_code == 1
    assert "python module 'no_such_package.agents' cannot be imported" in result.stderr


def test_a_run_whose_graders_only_measure_prints_no_pass_rate(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """``localization`` measures and never says pass or fail (here every score is an error:
    these prompt cases carry no gold locations): the run printed ``pass rate 0.00% (0/5)`` as if
    every case had failed. Those errors are grader errors (issue 28): exit 1 unless allowed."""
    _setup(cli_env, tmp_path)
    args = ("run", "sums", "--harness", "add", "--grader", "localization")
    assert invoke(cli_env, *args).exit_code == 1
    result = invoke(cli_env, *args, "--allow-grader-errors")
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())
    assert "finished: add@1.0.0 on sums@1.0.0 — 5/5 done, 0 errors, 5 grader errors" in out
    assert "no pass rate: every graded pair is a grader error" in out
    assert "pass rate 0" not in out
    run = orjson.loads(invoke(cli_env, "runs", "list", "--json").stdout)[0]
    assert run["pass_rate"] is None and run["pass_interval"] is None
    card = orjson.loads(invoke(cli_env, "runs", "scorecard", run["scorecard_id"]).stdout)
    assert (card["n"], card["pass_rate"], card["pass_at_k"]) == (5, None, {})
    assert card["metrics"]["localization"]["errors"] == 5
    rescored = invoke(cli_env, "runs", "rescore", run["id"], "--grader", "localization")
    assert rescored.exit_code == 0, rescored.output  # skipped when rescoring: no grader error
    assert "no pass rate: no grader gave a pass/fail verdict" in " ".join(rescored.stdout.split())
    numeric = invoke(cli_env, "runs", "rescore", run["id"], "--grader", "numeric")
    assert "pass rate " in " ".join(numeric.stdout.split())


def test_retry_and_resume_in_the_cli_are_never_taken_by_a_serving_worker_first(
    cli_env: dict[str, str], tmp_path: Path, engine: Engine, settings: Settings
) -> None:
    """The CLI requeues a run already held by its own process: a worker polling the same
    database (``benchbook serve``'s) never sees it queued. Before, a worker polling between
    the requeue and the CLI's claim took it, and the CLI failed with 409 "claimed by another
    worker at the same moment" (docs/runs.md's example, once in CI)."""
    _setup(cli_env, tmp_path)
    harness = tmp_path / "explode.json"
    callable_ = "tests.eval.harnesses.agents:explode"
    body = {
        "id": "explode",
        "version": "1.0.0",
        "kind": "python",
        "config": {"callable": callable_},
    }
    harness.write_bytes(orjson.dumps(body))
    assert invoke(cli_env, "harnesses", "register", str(harness)).exit_code == 0
    run = orjson.loads(invoke(cli_env, "run", "sums", "--harness", "explode", "--json").stdout)
    assert (run["counts"]["done"], run["counts"]["error"]) == (5, 1)  # c1 raises
    worker = RunWorker(engine, settings, poll_s=0.0005)
    worker.start()
    try:
        for command in ["retry", "resume", "retry", "retry", "resume", "retry"] * 2:
            result = invoke(cli_env, "runs", command, run["id"], "--json")
            assert result.exit_code == 0, (command, result.output)
            again = orjson.loads(result.stdout)
            assert (again["status"], again["counts"]["done"]) == ("finished", 5)
    finally:
        worker.stop()
        worker.join(5)


def test_the_leaderboard_names_hidden_subset_runs_and_a_footnote_only_for_a_frontier(
    cli_env: dict[str, str], tmp_path: Path
) -> None:
    """A new user's trial: a board of subset runs only said "no finished runs", and the
    frontier footnote was printed under tables where no row had a ``*``."""
    _setup(cli_env, tmp_path)
    assert invoke(cli_env, "run", "sums", "--harness", "add", "--limit", "2").exit_code == 0
    empty = invoke(cli_env, "leaderboard", "sums")
    assert empty.exit_code == 0, empty.output
    said = " ".join(empty.stdout.split())
    assert said == (
        "no run of sums@1.0.0 over all its cases yet; 1 subset run (--include-partial shows"
        " them, ranked apart)"
    )
    shown = invoke(cli_env, "leaderboard", "sums", "--include-partial")
    text = " ".join(shown.stdout.split())
    assert "subset: first 2 cases, ranked apart" in text
    assert "cost–accuracy frontier" not in text  # nothing priced: no row on a frontier
