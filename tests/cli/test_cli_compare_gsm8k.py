"""Acceptance (issue 11): two GSM8K runs against the local OpenAI-compatible server with
different answer tables, compared through ``benchbook compare``, on SQLite and PostgreSQL.

Baseline table: right on rows divisible by 3. Candidate table: right on rows divisible by 3 but
not by 21, and on rows divisible by 5. So the candidate fixes the rows divisible by 5 but not 3
and regresses the 50 rows divisible by 21 but not by 5 — every transition is known case by case.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from benchbook.contracts.dataset import GraderSpec
from benchbook.contracts.run import RunSettings, StartRunRequest
from benchbook.services import run_execution, runs, scorecards
from benchbook.services.context import Context
from tests.cli.conftest import invoke
from tests.eval.test_acceptance_gsm8k import (
    API_KEY,
    GSM8K_ROWS,
    gsm8k_answers,
    gsm8k_file,
    import_gsm8k,
    register_openai_harness,
)
from tests.openaiserver import OpenAIServer, last_user_text

BASELINE_RIGHT = frozenset(r for r in range(GSM8K_ROWS) if r % 3 == 0)
CANDIDATE_RIGHT = frozenset(r for r in range(GSM8K_ROWS) if (r % 3 == 0 and r % 21) or r % 5 == 0)


def table_reply(answers: dict[str, tuple[int, int]], right: frozenset[int]) -> Callable[..., str]:
    def reply(body: dict[str, Any]) -> str:
        row, answer = answers[last_user_text(body).strip()]
        return f"The answer is {answer if row in right else answer + 1}."

    return reply


def _run(ctx: Context, harness: str) -> str:
    request = StartRunRequest(
        dataset="gsm8k", harness=harness, graders=[{"id": "numeric"}],
        settings=RunSettings(concurrency=8),
    )  # fmt: skip
    run = run_execution.execute_run(ctx, runs.start_run(ctx, request).id)
    assert run.status == "finished" and run.scorecard_id is not None
    return run.id


def ids(rows: frozenset[int]) -> set[str]:
    return {f"gsm8k-{r}" for r in rows}


def test_two_gsm8k_runs_compare_case_by_case_and_gate_ci(
    ctx: Context,
    cli_env: dict[str, str],
    shared_data: Path,
    openai_server: OpenAIServer,
    tmp_path: Path,
) -> None:
    answers = gsm8k_answers(gsm8k_file(shared_data))
    openai_server.api_key = API_KEY
    import_gsm8k(ctx, shared_data)
    harness = register_openai_harness(ctx, openai_server.url)
    openai_server.reply = table_reply(answers, BASELINE_RIGHT)
    base = _run(ctx, harness)
    openai_server.reply = table_reply(answers, CANDIDATE_RIGHT)
    cand = _run(ctx, harness)
    fixed, regressed = CANDIDATE_RIGHT - BASELINE_RIGHT, BASELINE_RIGHT - CANDIDATE_RIGHT
    assert len(regressed) == 50 and len(fixed) == 176

    out = invoke(cli_env, "compare", base, cand, "--format", "json")
    assert out.exit_code == 0, out.output
    c = orjson.loads(out.stdout)["comparison"]
    by_id = {case_id: t for case_id, _, t, _, _ in c["cases"]}  # [id, sample, transition, …]
    assert len(by_id) == GSM8K_ROWS
    assert {i for i, t in by_id.items() if t == "fixed"} == ids(fixed)
    assert {i for i, t in by_id.items() if t == "regressed"} == ids(regressed)
    assert {i for i, t in by_id.items() if t == "still_passing"} == ids(
        BASELINE_RIGHT & CANDIDATE_RIGHT
    )
    everything = frozenset(range(GSM8K_ROWS))
    still_failing = everything - BASELINE_RIGHT - CANDIDATE_RIGHT
    assert {i for i, t in by_id.items() if t == "still_failing"} == ids(still_failing)
    assert c["pass_rate_delta"] == (len(fixed) - len(regressed)) / GSM8K_ROWS
    interval = c["delta_interval"]
    assert interval["low"] <= c["pass_rate_delta"] <= interval["high"]
    assert (interval["seed"], interval["resamples"]) == (0, 10_000)
    assert c["significant"] and c["comparable"]

    junit = tmp_path / "junit.xml"
    gated = invoke(cli_env, "compare", base, cand, "--fail-on", "regression",
                   "--junit-xml", str(junit))  # fmt: skip
    assert gated.exit_code == 1
    listed = next(line for line in gated.stdout.splitlines() if "regressed: " in line)
    assert set(listed.split("regressed: ")[1].replace("#0", "").split(", ")) == ids(regressed)
    root = ET.parse(junit).getroot()
    cases = root.findall("./testsuite/testcase")
    assert len(cases) == GSM8K_ROWS and root.attrib["failures"] == str(len(regressed))
    failed = {c.attrib["name"].removesuffix("#0") for c in cases if c.find("failure") is not None}
    assert failed == ids(regressed)

    assert invoke(cli_env, "runs", "tag", base, "baseline").exit_code == 0
    md = invoke(cli_env, "compare", "--baseline", "baseline", cand,
                "--fail-on", "significant-drop", "--format", "markdown")  # fmt: skip
    assert md.exit_code == 0, md.output  # a significant gain is no drop
    assert md.stdout.startswith("### Benchbook compare — ✅ passed")
    assert "<details><summary>50 regressed</summary>" in md.stdout
    assert "<details><summary>176 fixed</summary>" in md.stdout

    regex = GraderSpec(id="regex", config={"pattern": "answer"})
    other = scorecards.rescore_run(ctx, cand, [GraderSpec(id="numeric"), regex])
    flagged = invoke(cli_env, "compare", base, other.id, "--fail-on", "regression")
    assert flagged.exit_code == 2
    assert "not comparable: grader hash differs" in flagged.stdout
