"""Graders compare typed answers by documented rules (issue 8 item 1): text graders use the text
form of ``expected``; ``numeric`` compares numbers exactly (Decimal), never through floats."""

from __future__ import annotations

from typing import Any

import pytest

from benchbook.contracts import Case, GraderSpec
from benchbook.eval.graders.answer_match import grade_answer_match
from benchbook.eval.graders.numeric import grade_numeric
from benchbook.eval.graders.verdicts import expected_text


def _case(expected: Any) -> Case:
    return Case.model_validate(
        {"id": "a", "env": {"kind": "prompt"}, "task": "q", "expected": expected}
    )


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("4", "4"),
        (4, "4"),
        (4.5, "4.5"),
        (True, "true"),
        (False, "false"),
        ([1, "a"], '[1,"a"]'),
        ({"b": 1, "a": "é"}, '{"a":"é","b":1}'),
        (123456789012345678901234567890, "123456789012345678901234567890"),
        (None, None),
    ],
)
def test_the_text_form_of_expected(value: Any, text: str | None) -> None:
    assert expected_text(GraderSpec(id="answer-match"), _case(value)) == text


def test_answer_match_compares_a_number_by_its_text_form() -> None:
    spec = GraderSpec(id="answer-match")
    assert grade_answer_match(spec, "4", _case(4)).passed is True
    assert grade_answer_match(spec, "true", _case(True)).passed is True


@pytest.mark.parametrize("expected", ["7234019283746519283", 7234019283746519283])
def test_numeric_never_rounds_through_floats(expected: Any) -> None:
    spec = GraderSpec(id="numeric")
    assert grade_numeric(spec, "#### 7234019283746519040", _case(expected)).passed is False
    assert grade_numeric(spec, "#### 7,234,019,283,746,519,283", _case(expected)).passed is True


def test_numeric_reads_a_big_integer_and_a_float_answer_exactly() -> None:
    spec = GraderSpec(id="numeric")
    big = 123456789012345678901234567890
    assert grade_numeric(spec, f"FINAL ANSWER: {big}", _case(big)).passed is True
    assert grade_numeric(spec, f"FINAL ANSWER: {big + 1}", _case(big)).passed is False
    assert grade_numeric(spec, "0.1", _case(0.1)).passed is True
    assert grade_numeric(spec, "3", _case(True)).status == "error"
