"""The trace graders (SPEC H.5): steps, cost and latency caps on what a harness spent."""

from __future__ import annotations

import pytest

from benchbook.contracts import Case, GraderSpec
from benchbook.contracts.run import Trace
from benchbook.eval.graders.trace_limits import grade_cost, grade_latency, grade_steps
from benchbook.eval.grading import Submission

CASE = Case(id="c", env={"kind": "prompt"}, task="t")


def _submission(**trace: object) -> Submission:
    return Submission(answer="", trace=Trace.model_validate(trace))


@pytest.mark.parametrize(("calls", "cap", "passed"), [(0, 0, True), (3, 3, True), (4, 3, False)])
def test_steps_passes_when_tool_calls_are_at_most_the_max(
    calls: int, cap: int, passed: bool
) -> None:
    sub = _submission(tool_calls=[{"name": "search"}] * calls)
    score = grade_steps(GraderSpec(id="steps", config={"max": cap}), sub, CASE)
    assert score.status == "ok" and score.passed is passed
    assert score.value == calls and score.metric == "steps"


def test_cost_compares_the_priced_cost_with_the_cap() -> None:
    spec = GraderSpec(id="cost", config={"max_usd": 0.10})
    under = grade_cost(spec, _submission(cost_usd=0.04), CASE)
    over = grade_cost(spec, _submission(cost_usd=0.11), CASE)
    assert (under.passed, under.value) == (True, 0.04)
    assert (over.passed, over.value) == (False, 0.11)


def test_an_unpriced_trace_is_skipped_by_the_cost_grader() -> None:
    score = grade_cost(GraderSpec(id="cost", config={"max_usd": 1}), _submission(), CASE)
    assert score.status == "skipped" and score.passed is None
    assert "unknown" in str(score.detail["reason"])


def test_latency_accepts_a_cap_in_ms_or_in_seconds() -> None:
    sub = _submission(duration_ms=1500)
    in_s = grade_latency(GraderSpec(id="latency", config={"max_s": 1}), sub, CASE)
    in_ms = grade_latency(GraderSpec(id="latency", config={"max_ms": 1500}), sub, CASE)
    assert (in_s.passed, in_s.value, in_s.detail["cap"]) == (False, 1500.0, 1000.0)
    assert (in_ms.passed, in_ms.value) == (True, 1500.0)


@pytest.mark.parametrize(
    ("grader", "config"),
    [
        (grade_steps, {}),
        (grade_steps, {"max": -1}),
        (grade_steps, {"max": True}),
        (grade_cost, {"max_usd": "cheap"}),
        (grade_latency, {}),
        (grade_latency, {"max_s": 1, "max_ms": 1000}),
    ],
)
def test_a_missing_or_malformed_cap_is_an_error_score(grader: object, config: dict) -> None:
    spec = GraderSpec(id=grader.__name__.removeprefix("grade_"), config=config)  # type: ignore[attr-defined]
    score = grader(spec, _submission(cost_usd=0.0), CASE)  # type: ignore[operator]
    assert score.status == "error" and score.passed is None
