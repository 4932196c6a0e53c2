"""Grader config values are checked before any case runs (security finding: a regex pattern
``[unclosed``, numeric ``mode: nonsense`` or ``tolerance: -1`` got 202 and then every case
became a grader error), on start, report and rescore, for the plan and the cases' own graders."""

from __future__ import annotations

from typing import Any

import pytest

from benchbook.contracts import Dataset
from benchbook.contracts.run import ReportRunRequest, StartRunRequest
from benchbook.errors import Conflict, InvalidInput
from benchbook.services import datasets as ds
from benchbook.services import harnesses, run_reports, runs, scorecards
from benchbook.services.context import Context

BAD = [
    ({"id": "regex", "config": {"pattern": "[unclosed"}}, "config.pattern",
     "graders[0] (regex): config.pattern: not a regular expression: unterminated character set"),
    ({"id": "regex", "config": {}}, "config.pattern",
     "graders[0] (regex): config.pattern: must be a non-empty regular expression"),
    ({"id": "numeric", "config": {"mode": "nonsense"}}, "config.mode",
     "graders[0] (numeric): config.mode: must be one of flexible-extract, strict-match, math, "
     "final-answer (got 'nonsense')"),
    ({"id": "numeric", "config": {"mode": "final-answer", "tolerance": -1}}, "config.tolerance",
     "graders[0] (numeric): config.tolerance: must be a finite number >= 0"),
    ({"id": "numeric", "config": {"tolerance": -1}}, "config.tolerance",
     "graders[0] (numeric): config.tolerance: applies to mode final-answer only, not "
     "flexible-extract"),
]  # fmt: skip


def _setup(ctx: Context, graders: list[dict[str, Any]] | None = None) -> None:
    case = {"id": "q0", "env": {"kind": "prompt"}, "task": "2+2?", "expected": "4"}
    if graders is not None:
        case["graders"] = graders
    ds.register_dataset(ctx, Dataset.model_validate({"id": "d", "version": "1.0.0",
                                                     "cases": [case]}))  # fmt: skip
    body = {"id": "echo", "version": "1.0.0", "kind": "command", "config": {"argv": ["echo"]}}
    harnesses.register_harness(ctx, harnesses.parse_harness(body))


@pytest.mark.parametrize(("grader", "key", "message"), BAD, ids=lambda v: str(v)[:40])
def test_a_plan_with_an_unusable_value_is_refused_before_any_case_runs(
    ctx: Context, grader: dict[str, Any], key: str, message: str
) -> None:
    _setup(ctx)
    start = StartRunRequest.model_validate({"dataset": "d", "harness": "echo@1.0.0",
                                            "graders": [grader]})  # fmt: skip
    with pytest.raises(InvalidInput) as caught:
        runs.start_run(ctx, start)
    assert caught.value.message.startswith(message), caught.value.message
    assert caught.value.details["errors"][0]["path"] == f"graders[0].{key}"
    assert runs.list_runs(ctx) == [], "a refused run is not stored"
    report = ReportRunRequest.model_validate(
        {"dataset": "d", "harness": "ext@1.0.0", "results": [{"case_id": "q0", "answer": "4"}],
         "graders": [grader]})  # fmt: skip
    with pytest.raises(InvalidInput, match=r"^graders\[0\]"):
        run_reports.report_run(ctx, report)
    good = ReportRunRequest.model_validate(
        {"dataset": "d", "harness": "ext@1.0.0", "results": [{"case_id": "q0", "answer": "4"}]}
    )
    run = run_reports.report_run(ctx, good)
    spec = start.graders or []
    with pytest.raises(InvalidInput, match=r"^graders\[0\]"):
        scorecards.rescore_run(ctx, run.id, spec)


def test_a_cases_own_unusable_grader_is_refused_at_run_start(ctx: Context) -> None:
    _setup(ctx, graders=[{"id": "regex", "config": {"pattern": "[unclosed"}}])
    start = StartRunRequest.model_validate({"dataset": "d", "harness": "echo@1.0.0"})
    with pytest.raises(Conflict) as caught:
        runs.start_run(ctx, start)
    assert caught.value.message.startswith(
        "case 'q0': graders[0] (regex): config.pattern: not a regular expression"
    ), caught.value.message
    report = ReportRunRequest.model_validate(
        {"dataset": "d", "harness": "ext@1.0.0", "results": [{"case_id": "q0", "answer": "4"}]}
    )
    with pytest.raises(Conflict, match=r"^case 'q0': graders"):
        run_reports.report_run(ctx, report)
