"""The grader registry, answer-match, regex, and the graders that need more than an answer."""

from __future__ import annotations

import pytest

from benchbook.contracts import Case, GraderSpec
from benchbook.errors import InvalidInput
from benchbook.eval.graders import GRADERS, check_grader_ids, grade
from benchbook.eval.graders.answer_match import normalize_answer

SPEC_H_IDS = {
    "answer-match",
    "numeric",
    "gaia",
    "regex",
    "command",
    "tests-pass",
    "swe-bench",
    "judge",
    "steps",
    "cost",
    "latency",
    "localization",
}


def _case(expected: str | None = "Paris") -> Case:
    return Case(id="c", env={"kind": "prompt"}, task="Capital of France?", expected=expected)


def test_the_registry_knows_every_spec_h_grader() -> None:
    assert set(GRADERS) == SPEC_H_IDS


def test_an_unknown_grader_is_rejected_with_the_known_list() -> None:
    with pytest.raises(InvalidInput) as info:
        grade(GraderSpec(id="bleu"), "x", _case())
    assert "bleu" in info.value.message and "numeric" in info.value.details["known"]
    with pytest.raises(InvalidInput):
        check_grader_ids([GraderSpec(id="numeric"), GraderSpec(id="nope")])


@pytest.mark.parametrize(
    ("mode", "prediction", "passes"),
    [
        ("exact", "Paris", True),
        ("exact", "  Paris\n", True),
        ("exact", "paris", False),
        ("contains", "The capital is Paris.", True),
        ("contains", "The capital is paris.", False),
        ("normalized", "  PARIS! ", True),
        ("normalized", "Paris, France", False),
    ],
)
def test_answer_match_modes(mode: str, prediction: str, passes: bool) -> None:
    score = grade(GraderSpec(id="answer-match", config={"mode": mode}), prediction, _case())
    assert score.status == "ok" and score.passed is passes


def test_normalized_contains_matches_on_word_boundaries() -> None:
    spec = GraderSpec(id="answer-match", config={"mode": "normalized", "contains": True})
    assert grade(spec, "It is PARIS, of course.", _case()).passed is True
    assert grade(spec, "It is Parisian.", _case()).passed is False


def test_normalize_answer_is_squads_rule_lowercase_no_punctuation_no_articles() -> None:
    assert normalize_answer("The  Hello,  World!") == "hello world"
    assert normalize_answer("U.S.A.") == "usa"  # removed, not turned into spaces (SQuAD)
    assert normalize_answer("Ｈello") == "ｈello"  # NFC, not NFKC: width is not folded


def test_answer_match_falls_back_to_the_case_expected_and_config_overrides_it() -> None:
    assert grade(GraderSpec(id="answer-match"), "Paris", _case()).passed is True
    spec = GraderSpec(id="answer-match", config={"expected": "Lyon"})
    assert grade(spec, "Paris", _case()).passed is False


def test_answer_match_without_any_reference_is_an_error() -> None:
    assert grade(GraderSpec(id="answer-match"), "Paris", _case(None)).status == "error"
    bad = GraderSpec(id="answer-match", config={"mode": "fuzzy"})
    assert grade(bad, "Paris", _case()).status == "error"


def test_regex_searches_and_records_the_first_group() -> None:
    spec = GraderSpec(id="regex", config={"pattern": r"answer:\s*(\w+)", "ignore_case": True})
    score = grade(spec, "ANSWER: yes", _case())
    assert score.passed is True and score.detail["match"] == "yes"
    assert grade(spec, "no verdict", _case()).passed is False


def test_regex_fullmatch_requires_the_whole_prediction() -> None:
    spec = GraderSpec(id="regex", config={"pattern": r"\d+", "fullmatch": True})
    assert grade(spec, "42", _case()).passed is True
    assert grade(spec, "42 apples", _case()).passed is False


@pytest.mark.parametrize("config", [{}, {"pattern": "("}, {"pattern": 3}])
def test_a_missing_or_bad_pattern_is_an_error(config: dict[str, object]) -> None:
    score = grade(GraderSpec(id="regex", config=config), "x", _case())  # type: ignore[arg-type]
    assert score.status == "error" and score.passed is None


@pytest.mark.parametrize("grader_id", ["command", "tests-pass", "swe-bench", "steps", "cost"])
def test_graders_that_need_a_workspace_or_trace_are_skipped_not_passed(grader_id: str) -> None:
    score = grade(GraderSpec(id=grader_id), "done", _case())
    assert score.status == "skipped" and score.passed is None and score.value == 0.0
    assert "needs" in str(score.detail["reason"])


def test_a_judge_with_a_valid_rubric_is_skipped_with_its_criteria() -> None:
    spec = GraderSpec(
        id="judge",
        config={
            "rubric": {
                "kind": "plan",
                "criteria": [{"id": "budget", "description": "Stays within budget."}],
            },
            "scoring": {"kind": "proxy", "approximates": "the official evaluator"},
        },
    )
    score = grade(spec, "a plan", _case())
    assert score.status == "skipped"
    assert score.detail["criteria"] == ["budget"] and score.detail["scoring"] == "proxy"


def test_a_text_rubric_is_one_criterion() -> None:
    score = grade(GraderSpec(id="judge", config={"rubric": "Pass if correct."}), "x", _case())
    assert score.detail["criteria"] == ["rubric"]


@pytest.mark.parametrize(
    "config",
    [{}, {"rubric": {"criteria": []}}, {"rubric": {"criteria": [{"id": "a"}]}}, {"rubric": 3}],
)
def test_a_judge_with_a_malformed_rubric_is_an_error(config: dict[str, object]) -> None:
    score = grade(GraderSpec(id="judge", config=config), "x", _case())  # type: ignore[arg-type]
    assert score.status == "error"
    assert "config.rubric" in str(score.detail["error"])


def test_an_exception_inside_a_grader_becomes_an_error_score(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def explode(spec: GraderSpec, prediction: str, case: Case) -> None:
        raise RuntimeError("boom")

    monkeypatch.setitem(GRADERS, "numeric", explode)  # type: ignore[arg-type]
    score = grade(GraderSpec(id="numeric"), "1", _case("1"))
    assert score.status == "error" and "RuntimeError: boom" in str(score.detail["error"])


def test_a_score_rejects_nan_values_and_unknown_fields() -> None:
    from pydantic import ValidationError

    from benchbook.contracts import Score

    with pytest.raises(ValidationError):
        Score(grader="numeric", metric="numeric", value=float("nan"))
    with pytest.raises(ValidationError):
        Score.model_validate({"grader": "g", "metric": "m", "value": 1.0, "extra": 1})
    with pytest.raises(ValidationError):
        Score(grader="g", metric="m", value=1.0, status="done")  # type: ignore[arg-type]
