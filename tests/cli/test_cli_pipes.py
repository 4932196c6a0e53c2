"""Issue 30 §5: the CLI in scripts and CI logs. Piped (stdout not a terminal), tables keep every
value whole on its line — no cell wraps at 80 columns (``finishe d``) — and ``runs results``
cuts an answer with ``…`` unless ``--wide``, with expected/extracted columns."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from benchbook.contracts.run import ReportedResult, ReportRunRequest
from benchbook.services import datasets as ds
from benchbook.services import run_reports
from benchbook.services.context import Context
from tests.cli.conftest import invoke
from tests.eval.test_runs import arithmetic

LONG_HARNESS = "a-harness-with-a-name-long-enough-to-wrap-a-table-at-eighty-columns@1.0.0"
LONG_ANSWER = "The answer, after a good deal of working that goes on and on, is " + "x" * 80 + " 1"


def _piped(cli_env: dict[str, str], command: str) -> str:
    """``benchbook COMMAND | cat`` through a real shell pipe, without ``COLUMNS``."""
    env = {k: v for k, v in {**os.environ, **cli_env}.items() if k != "COLUMNS"}
    benchbook = Path(sys.executable).parent / "benchbook"
    done = subprocess.run(
        ["bash", "-c", f"{benchbook} {command} | cat"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def _report(ctx: Context) -> str:
    ds.register_dataset(ctx, arithmetic("qa", n=2))
    rows = [
        ReportedResult(case_id="c0", answer=LONG_ANSWER),
        ReportedResult(case_id="c1", answer="7"),
    ]
    request = ReportRunRequest(dataset="qa", harness=LONG_HARNESS, results=rows)
    return run_reports.report_run(ctx, request).id


def test_runs_list_and_results_keep_whole_values_in_a_pipe(
    ctx: Context, cli_env: dict[str, str]
) -> None:
    run_id = _report(ctx)
    listed = _piped(cli_env, "runs list")
    row = next(line for line in listed.splitlines() if run_id in line)
    assert LONG_HARNESS in row and "finished" in row  # one line, nothing folded
    assert max(map(len, listed.splitlines())) > 80

    results = _piped(cli_env, f"runs results {run_id}")
    c0 = next(line for line in results.splitlines() if "│ c0 " in line)
    assert "…" in c0 and LONG_ANSWER not in c0  # cut, and says so
    cells = [c.strip() for c in c0.split("│")]
    assert cells[5] == LONG_ANSWER[:59] + "…"
    assert cells[6] == "1" and cells[7] == "1"  # expected 1, extracted 1 (the last number)
    c1 = next(line for line in results.splitlines() if "│ c1 " in line)
    assert [c.strip() for c in c1.split("│")][6:8] == ["2", "7"]

    wide = _piped(cli_env, f"runs results {run_id} --wide")
    assert LONG_ANSWER in wide


def test_an_explicit_columns_still_narrows_the_table(ctx: Context, cli_env: dict[str, str]) -> None:
    _report(ctx)
    result = invoke(cli_env, "runs", "list")  # COLUMNS=80 in the environment
    assert result.exit_code == 0, result.output
    assert max(map(len, result.stdout.splitlines())) <= 80


def test_each_invocation_gets_the_width_its_environment_asks_for(
    ctx: Context, cli_env: dict[str, str]
) -> None:
    """Rich reads ``COLUMNS`` when a console is made: a process that runs the CLI twice (a test
    runner, a notebook) used to keep the first call's width for every later call (CI cut the
    second, wide listing at 80 columns)."""
    _report(ctx)
    narrow = invoke({**cli_env, "COLUMNS": "80"}, "runs", "list")
    wide = invoke({**cli_env, "COLUMNS": "2000"}, "runs", "list")
    assert max(map(len, narrow.stdout.splitlines())) <= 80
    assert LONG_HARNESS in wide.stdout and max(map(len, wide.stdout.splitlines())) > 80


def test_datasets_show_keeps_whole_tasks_in_a_pipe(ctx: Context, cli_env: dict[str, str]) -> None:
    dataset = arithmetic("long", n=1)
    case = dataset.cases[0].model_copy(update={"task": LONG_ANSWER})
    ds.register_dataset(ctx, dataset.model_copy(update={"cases": [case]}))
    shown = _piped(cli_env, "datasets show long 1.0.0")
    assert LONG_ANSWER in shown and "…" not in shown
