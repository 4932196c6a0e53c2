"""``numeric`` mode ``final-answer`` (Benchbook's former default): the table from SPEC F/H and the
official GSM8K answer format. The reference modes are in ``test_reference_rules.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchbook.contracts import Case, GraderSpec
from benchbook.eval.graders import grade
from benchbook.eval.graders.numeric import extract_number

NUMERIC = GraderSpec(id="numeric", config={"mode": "final-answer", "tolerance": 1e-6})


def _case(expected: str | None) -> Case:
    return Case(id="q", env={"kind": "prompt"}, task="How many?", expected=expected)


# (prediction, expected, passes)
TABLE = [
    ("FINAL ANSWER: 1,000", "1000", True),
    ("$1000.", "1000", True),
    ("The total is $1,000.", "1000", True),
    ("Natalia sold 48 + 24 = 72 clips.\n#### 72", "72", True),
    ("She had 5 apples, ate 2, so 3 are left.", "3", True),
    ("She had 5 apples, ate 2, so 3 are left.", "5", False),
    ("The temperature fell to -5 degrees.", "-5", True),
    ("The change is −12.", "-12", True),
    ("The loss is $-7.", "-7", True),
    ("The temperature fell to 5 degrees.", "-5", False),
    ("Each costs 0.5 dollars", "0.5", True),
    ("Each costs .5 dollars", "0.5", True),
    ("He paid $1,234.50 in total.", "1234.5", True),
    ("FINAL ANSWER: 18.0", "18", True),
    ("FINAL ANSWER: 18 (that is 3 x 6)", "18", True),
    ("final answer: 42", "42", True),
    ("I think 41, no wait. FINAL ANSWER: 42", "42", True),
    ("The answer is 2,125", "2,125", True),
    ("The answer is 2125", "2,125", True),
    ("It takes 10-12 days", "12", True),
    ("I cannot tell.", "7", False),
    ("", "7", False),
    ("FINAL ANSWER: seven", "7", False),
    ("The answer is 1000.00001", "1000", False),
    ("The answer is 1000.0000001", "1000", True),
]


@pytest.mark.parametrize(("prediction", "expected", "passes"), TABLE)
def test_the_numeric_grader_follows_the_gsm8k_table(
    prediction: str, expected: str, passes: bool
) -> None:
    score = grade(NUMERIC, prediction, _case(expected))
    assert score.status == "ok"
    assert score.passed is passes
    assert score.value == (1.0 if passes else 0.0)
    assert score.grader == "numeric" and score.metric == "numeric"


def test_a_prediction_without_a_number_fails_and_says_why() -> None:
    score = grade(NUMERIC, "no idea", _case("3"))
    assert score.passed is False
    assert score.detail["extracted"] is None
    assert score.detail["reason"] == "no number in the prediction"


def test_the_extracted_number_is_recorded() -> None:
    score = grade(NUMERIC, "FINAL ANSWER: 1,000", _case("1000"))
    assert score.detail["extracted"] == 1000.0 and score.detail["expected"] == 1000.0


def test_a_case_without_an_expected_answer_is_an_error_not_a_failure() -> None:
    score = grade(NUMERIC, "3", _case(None))
    assert score.status == "error" and score.passed is None


def test_a_non_numeric_expected_answer_is_an_error() -> None:
    score = grade(NUMERIC, "3", _case("three"))
    assert score.status == "error"
    assert "not a number" in str(score.detail["error"])


def test_a_wider_tolerance_accepts_a_near_answer() -> None:
    loose = GraderSpec(id="numeric", config={"mode": "final-answer", "tolerance": 0.01})
    assert grade(loose, "3.333", _case("3.33")).passed is True
    assert grade(NUMERIC, "3.333", _case("3.33")).passed is False


@pytest.mark.parametrize("tolerance", [-1, "0.1", True])
def test_a_bad_tolerance_is_an_error(tolerance: object) -> None:
    spec = GraderSpec(id="numeric", config={"mode": "final-answer", "tolerance": tolerance})  # type: ignore[dict-item]
    assert grade(spec, "3", _case("3")).status == "error"


def test_config_expected_overrides_the_case() -> None:
    for mode in ("final-answer", "flexible-extract", "strict-match", "math"):
        spec = GraderSpec(id="numeric", config={"mode": mode, "expected": "4"})
        answer = "\\boxed{4}" if mode == "math" else "#### 4"
        assert grade(spec, answer, _case("3")).passed is True


def test_every_gsm8k_reference_answer_grades_itself(shared_data: Path) -> None:
    path = shared_data / "gsm8k" / "test.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line]
    assert len(rows) == 1319
    for row in rows:
        final = row["answer"].rsplit("####", 1)[1].strip()
        # The worked solution itself, as a model would write it, passes against its final.
        for spec in (NUMERIC, GraderSpec(id="numeric", config={"mode": "strict-match"})):
            score = grade(spec, row["answer"], _case(final))
            assert score.passed is True, (row["answer"][-60:], final)
        assert extract_number(final) is not None
