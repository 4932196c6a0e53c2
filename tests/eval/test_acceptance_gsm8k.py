"""Acceptance (issue 10): GSM8K end to end on the real file, on SQLite and PostgreSQL.

The real ``../shared/data/gsm8k/test.jsonl`` (1,319 problems) is imported through the catalog
entry, an ``openai`` harness is pointed at the local OpenAI-compatible server, and the run is
executed by the real local executor with the ``numeric`` grader. The server answers from the
question text alone: right for rows whose number is divisible by 3, off by one otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from statsmodels.stats.proportion import proportion_confint

from benchbook.contracts.run import CaseResult, RunSettings, StartRunRequest
from benchbook.eval.pricing import load_pricing
from benchbook.services import harnesses, imports, run_execution, run_results, runs, scorecards
from benchbook.services.context import Context
from benchbook.services.secrets import set_secret
from tests.openaiserver import OpenAIServer, count_tokens, last_user_text, message_text
from tests.openaiserver.allow import allow_endpoint, hosts_of

GSM8K_ROWS = 1319
MODEL = "gpt-4o-mini"
API_KEY_NAME = "FAKE_OPENAI_KEY"
API_KEY = "sk-test-acceptance"
#: Rows the server answers correctly: 0, 3, …, 1317.
RIGHT_ROWS = frozenset(range(0, GSM8K_ROWS, 3))


def gsm8k_file(shared_data: Path) -> Path:
    return shared_data / "gsm8k" / "test.jsonl"


def gsm8k_answers(path: Path) -> dict[str, tuple[int, int]]:
    """question (stripped) → (row, the integer after ``####``) for every row of the file."""
    out: dict[str, tuple[int, int]] = {}
    with path.open(encoding="utf-8") as lines:
        for row, line in enumerate(lines):
            record = json.loads(line)
            answer = int(record["answer"].rsplit("####", 1)[1].strip().replace(",", ""))
            out[record["question"].strip()] = (row, answer)
    assert len(out) == GSM8K_ROWS  # no duplicate question: the text alone names the row
    return out


def gsm8k_reply(answers: dict[str, tuple[int, int]]) -> Callable[[dict[str, Any]], str]:
    """The server's reply: the right number for rows in :data:`RIGHT_ROWS`, else one more."""

    def reply(body: dict[str, Any]) -> str:
        row, answer = answers[last_user_text(body).strip()]
        return f"The answer is {answer if row in RIGHT_ROWS else answer + 1}."

    return reply


def import_gsm8k(ctx: Context, shared_data: Path) -> None:
    request = imports.parse_import_request({"benchmark": "gsm8k"})
    result = imports.import_benchmark(ctx, request, gsm8k_file(shared_data))
    assert (result.id, result.cases) == ("gsm8k", GSM8K_ROWS)


def openai_harness_body(base_url: str, harness_id: str = "mini") -> dict[str, Any]:
    return {
        "id": harness_id,
        "version": "1.0.0",
        "kind": "openai",
        "config": {"base_url": base_url, "model": MODEL, "api_key_secret": API_KEY_NAME},
    }


def register_openai_harness(ctx: Context, base_url: str, harness_id: str = "mini") -> str:
    body = openai_harness_body(base_url, harness_id)
    harnesses.register_harness(ctx, harnesses.parse_harness(body))
    set_secret(ctx, API_KEY_NAME, API_KEY, "user", hosts_of(base_url))
    allow_endpoint(ctx, base_url)
    return f"{harness_id}@1.0.0"


def all_results(ctx: Context, run_id: str) -> list[CaseResult]:
    """Every result of a run, paged 500 at a time (cursor: the last result's
    ``position:sample``, so runs of a case subset or with repeats page correctly)."""
    out: list[CaseResult] = []
    after: str | None = None
    while page := run_results.list_run_results(ctx, run_id, after=after, limit=500):
        out += page
        after = f"{page[-1].position}:{page[-1].sample}"
    pairs = [(r.case_id, r.sample) for r in out]
    assert len(pairs) == len(set(pairs)), "a (case, sample) pair was listed twice"
    return out


def test_gsm8k_end_to_end_gives_the_exact_pass_rate_interval_tokens_and_cost(
    ctx: Context, shared_data: Path, openai_server: OpenAIServer
) -> None:
    answers = gsm8k_answers(gsm8k_file(shared_data))
    reply = gsm8k_reply(answers)
    openai_server.reply = reply
    openai_server.api_key = API_KEY  # the key reaches the server from the user's secret
    import_gsm8k(ctx, shared_data)
    harness = register_openai_harness(ctx, openai_server.url)
    request = StartRunRequest(
        dataset="gsm8k",
        harness=harness,
        graders=[{"id": "numeric"}],
        settings=RunSettings(concurrency=8),
    )
    run = run_execution.execute_run(ctx, runs.start_run(ctx, request).id)

    assert run.status == "finished"
    seen = [last_user_text(body).strip() for body in openai_server.requests]
    assert openai_server.call_count == len(set(seen)) == GSM8K_ROWS  # each case exactly once
    assert set(seen) == set(answers)
    passed = len(RIGHT_ROWS)
    assert (run.counts.done, run.counts.error, run.counts.passed) == (GSM8K_ROWS, 0, passed)

    assert run.scorecard_id is not None
    card = scorecards.get_scorecard(ctx, run.scorecard_id)
    assert (card.n, card.passed, card.errors) == (GSM8K_ROWS, passed, 0)
    assert card.pass_rate == passed / GSM8K_ROWS == 440 / 1319
    low, high = proportion_confint(passed, GSM8K_ROWS, alpha=0.05, method="wilson")
    assert card.pass_interval is not None
    assert card.pass_interval.low == pytest.approx(low, abs=1e-12)
    assert card.pass_interval.high == pytest.approx(high, abs=1e-12)

    tokens_in = sum(
        count_tokens(message_text(m)) for body in openai_server.requests for m in body["messages"]
    )
    tokens_out = sum(count_tokens(reply(body)) for body in openai_server.requests)
    assert (card.tokens_input, card.tokens_output) == (tokens_in, tokens_out)
    table, sha = load_pricing()
    price = table.models[MODEL]
    cost = (
        tokens_in * Fraction(repr(price.input_per_mtok_usd))
        + tokens_out * Fraction(repr(price.output_per_mtok_usd))
    ) / 1_000_000
    assert cost > 0
    assert card.cost_usd == pytest.approx(float(cost), rel=1e-12)
    assert run.spent_usd == pytest.approx(float(cost), rel=1e-12)
    assert card.pricing_sha256 == sha

    results = all_results(ctx, run.id)
    assert [r.case_id for r in results] == [f"gsm8k-{i}" for i in range(GSM8K_ROWS)]
    assert {r.case_id for r in results if r.passed} == {f"gsm8k-{i}" for i in RIGHT_ROWS}
    assert results[0].answer == "The answer is 18."  # row 0: Janet's ducks, #### 18
