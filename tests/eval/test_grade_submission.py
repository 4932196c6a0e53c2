"""``grade_submission`` (SPEC H.5): one dispatch over answer, trace, workspace and judge graders."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from benchbook.contracts import Case, GraderSpec
from benchbook.contracts.run import Trace
from benchbook.contracts.score import Score
from benchbook.eval import graders, judges
from benchbook.eval.grading import Grading, Submission, grade_submission

CASE = Case(id="c", env={"kind": "prompt"}, task="Capital of France?", expected="Paris")


def _grade(specs: list[GraderSpec], sub: Submission) -> list[Score]:
    return asyncio.run(grade_submission(specs, sub, CASE, Grading()))


def _sub(workdir: Path | None = None, status: str = "ok") -> Submission:
    trace = Trace(answer="Paris", tool_calls=[{"name": "search"}] * 2, duration_ms=1200)
    return Submission("Paris", trace, status, workdir)  # type: ignore[arg-type]


def test_each_family_is_graded_in_plan_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def fake_judge(
        spec: GraderSpec, sub: Submission, case: Case, grading: Grading
    ) -> list[Score]:
        assert sub.answer == "Paris" and case.expected == "Paris"
        return [
            Score(grader="judge", metric="judge:j:overall", value=1.0, passed=True),
            Score(grader="judge", metric="judge:j:milestone:m1", value=0.0, passed=False),
        ]

    monkeypatch.setattr(judges, "run_judge", fake_judge)
    specs = [
        GraderSpec(id="answer-match"),
        GraderSpec(id="steps", config={"max": 1}),
        GraderSpec(id="latency", config={"max_s": 2}),
        GraderSpec(id="command", config={"cmd": "exit 0"}),
        GraderSpec(id="judge", config={"rubric": "Correct capital."}),
        GraderSpec(id="swe-bench"),
    ]
    scores = _grade(specs, _sub(tmp_path))
    assert [s.metric for s in scores] == [
        "answer-match",
        "steps",
        "latency",
        "command",
        "judge:j:overall",
        "judge:j:milestone:m1",
        "swe-bench",
    ]
    assert [s.passed for s in scores] == [True, False, True, True, True, False, None]
    assert scores[1].value == 2.0 and scores[-1].status == "skipped"


def test_an_errored_harness_is_not_graded() -> None:
    boom = GraderSpec(id="command", config={"cmd": "touch graded"})
    assert _grade([GraderSpec(id="answer-match"), boom], _sub(status="error")) == []


def test_an_exception_inside_a_grader_becomes_an_error_score(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(spec: GraderSpec, sub: Submission, case: Case) -> Score:
        raise RuntimeError("grader bug")

    monkeypatch.setitem(graders.TRACE_GRADERS, "steps", broken)
    scores = _grade(
        [GraderSpec(id="steps", config={"max": 1}), GraderSpec(id="answer-match")], _sub()
    )
    assert scores[0].status == "error" and "RuntimeError: grader bug" in str(
        scores[0].detail["error"]
    )
    assert scores[1].passed is True  # the next grader still runs


def test_a_command_that_cannot_start_is_an_error_score(tmp_path: Path) -> None:
    spec = GraderSpec(id="command", config={"argv": [str(tmp_path / "no-such-program")]})
    (score,) = _grade([spec], _sub(tmp_path))
    assert score.status == "error" and "FileNotFoundError" in str(score.detail["error"])


def test_an_unknown_grader_id_is_an_error_score_not_a_crash() -> None:
    (score,) = _grade([GraderSpec(id="bleu")], _sub())
    assert score.status == "error" and "bleu" in str(score.detail["error"])


def test_a_rescore_without_a_workspace_skips_workspace_graders() -> None:
    (score,) = _grade([GraderSpec(id="tests-pass", config={"cmd": "true"})], _sub(None))
    assert score.status == "skipped"
