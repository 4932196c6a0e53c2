"""Secrets are never stored in clear (issue 27 item 4), on SQLite and PostgreSQL: a harness that
prints its secret, on stdout and in its error, is stored with ``***`` in the answer, the error,
the run's top errors and the trace; so is the installation's ``HF_TOKEN``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import select

from benchbook.contracts import Dataset
from benchbook.contracts.run import ReportRunRequest, StartRunRequest
from benchbook.services import datasets as ds
from benchbook.services import harnesses, run_execution, run_reports, run_results, runs
from benchbook.services.context import Context
from benchbook.services.masking import MASK, mask_json_text, masked_values
from benchbook.services.secrets import set_secret
from benchbook.store.tables import case_results
from benchbook.store.tables import runs as runs_table
from tests.services.test_code_rules import member

SECRET = "sk-live-5ecret-value-42"
HF_TOKEN = "hf_token_visible_to_the_server"


def two_cases() -> Dataset:
    cases = [
        {"id": "ok", "env": {"kind": "prompt"}, "task": "pass", "expected": "x"},
        {"id": "bad", "env": {"kind": "prompt"}, "task": "fail", "expected": "x"},
    ]
    return Dataset.model_validate({"id": "leaky", "version": "1.0.0", "cases": cases})


def leaky_harness(ctx: Context) -> str:
    script = (
        'echo "token=$API_TOKEN hf=$HF"; echo "401: bad key $API_TOKEN" >&2; test {task} = pass'
    )
    body: dict[str, Any] = {
        "id": "leaky",
        "version": "1.0.0",
        "kind": "command",
        "config": {
            "argv": ["sh", "-c", script],
            "secrets": ["API_TOKEN"],
            "env": {"HF": HF_TOKEN},
        },
    }
    harnesses.register_harness(ctx, harnesses.parse_harness(body))
    return "leaky@1.0.0"


def stored_text(ctx: Context, run_id: str) -> str:
    """Every stored column of the run's results and the run row, as text."""
    with ctx.engine.connect() as conn:
        rows = conn.execute(select(case_results).where(case_results.c.run_id == run_id)).all()
        run = conn.execute(select(runs_table).where(runs_table.c.id == run_id)).one()
    return repr([tuple(r) for r in rows]) + repr(tuple(run))


@pytest.fixture
def tuned(ctx: Context) -> Context:
    settings = ctx.settings.model_copy(update={"hf_token": HF_TOKEN})
    return Context(principal=ctx.principal, engine=ctx.engine, settings=settings)


def test_a_printed_secret_is_stored_masked(tuned: Context) -> None:
    ds.register_dataset(tuned, two_cases())
    harness = leaky_harness(tuned)
    set_secret(tuned, "API_TOKEN", SECRET, "workspace")
    mia = member(tuned)
    mia.settings = tuned.settings
    request = StartRunRequest(dataset="leaky", harness=harness)
    run = run_execution.execute_run(mia, runs.start_run(mia, request).id)
    assert (run.counts.ok, run.counts.error) == (1, 1), run
    by_id = {r.case_id: r for r in run_results.list_run_results(mia, run.id)}
    assert by_id["ok"].answer == f"token={MASK} hf={MASK}"
    assert by_id["bad"].error is not None and SECRET not in by_id["bad"].error
    assert all(SECRET not in e.error for e in run.top_errors)
    trace = run_results.get_run_trace(mia, run.id, "ok")
    assert SECRET not in trace.model_dump_json() and HF_TOKEN not in trace.model_dump_json()
    stored = stored_text(mia, run.id)
    assert SECRET not in stored and HF_TOKEN not in stored
    assert MASK in stored


def test_a_reported_answer_echoing_a_resolved_secret_is_stored_masked(tuned: Context) -> None:
    ds.register_dataset(tuned, two_cases())
    set_secret(tuned, "API_TOKEN", SECRET, "workspace")
    report = ReportRunRequest.model_validate(
        {
            "dataset": "leaky",
            "harness": "ext@1.0.0",
            "results": [
                {"case_id": "ok", "answer": f"the server's token is {HF_TOKEN}"},
                {"case_id": "bad", "error": f"upstream 401: {HF_TOKEN} rejected"},
            ],
        }
    )
    run = run_reports.report_run(tuned, report)
    stored = stored_text(tuned, run.id)
    assert HF_TOKEN not in stored and MASK in stored


def test_masking_takes_the_longest_value_first_and_skips_tiny_ones() -> None:
    values = masked_values(["abc", "secret", "secret-longer", None, ""])
    assert values == ["secret-longer", "secret"]
    assert mask_json_text(json.dumps({"a": 'x"secret-longer"y'}), values) == '{"a": "x\\"***\\"y"}'
