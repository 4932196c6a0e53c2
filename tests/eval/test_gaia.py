"""The GAIA question scorer, ported from the leaderboard's scorer.py: a table of its rules."""

from __future__ import annotations

import pytest

from benchbook.contracts import Case, GraderSpec
from benchbook.eval.graders import grade
from benchbook.eval.graders.gaia import (
    answer_kind,
    normalize_number_str,
    normalize_str,
    question_scorer,
    split_string,
)

GAIA = GraderSpec(id="gaia")

# (model answer, ground truth, passes, why)
TABLE = [
    # numbers: $, % and , are removed from the answer, then float equality
    ("17", "17", True, "plain number"),
    ("17.0", "17", True, "float equality"),
    ("$17", "17", True, "dollar sign removed"),
    ("17%", "17", True, "percent sign removed"),
    ("1,000", "1000", True, "thousands comma removed"),
    ("$1,000.00", "1000", True, "dollar, comma and decimals"),
    ("17 km", "17", False, "other units are not removed"),
    ("seventeen", "17", False, "words are not numbers (inf)"),
    ("17.5", "17", False, "no tolerance"),
    (" 42 ", "42", True, "float() ignores surrounding spaces"),
    ("-3", "-3", True, "negative number"),
    ("0.1", "0.10", True, "reference parsed as a float"),
    # lists: split on , and ; and compared element by element
    ("apple, banana, cherry", "apple, banana, cherry", True, "same list"),
    ("Apple,Banana,Cherry", "apple, banana, cherry", True, "case and spaces ignored"),
    ("apple; banana; cherry", "apple, banana, cherry", True, "; and , both separate"),
    ("apple, banana", "apple, banana, cherry", False, "length mismatch"),
    ("apple, banana, cherry, date", "apple, banana, cherry", False, "longer list"),
    ("banana, apple, cherry", "apple, banana, cherry", False, "order matters"),
    ("3, $4, 5%", "3, 4, 5", True, "numeric elements normalized"),
    ("3, four, 5", "3, 4, 5", False, "a word for a numeric element"),
    ("Paris, 2, London", "paris, 2, london", True, "mixed strings and numbers"),
    ("St. Louis, Chicago", "St Louis, Chicago", False, "list elements keep punctuation"),
    ("1, 000", "1,000", True, "'1,000' as a reference is a two-element list upstream"),
    ("1000", "1,000", False, "…so a plain 1000 does not match it"),
    # strings: whitespace and punctuation removed, lowercased
    ("Sea Gull", "seagull", True, "whitespace removed"),
    ("Right.", "right", True, "punctuation removed"),
    ("  THE  Answer!  ", "the answer", True, "case, spaces and punctuation"),
    ("St. Louis", "St Louis", True, "punctuation removed in plain strings"),
    ("cat", "dog", False, "different strings"),
    ("café", "cafe", False, "accents are not punctuation"),
]


@pytest.mark.parametrize(("answer", "truth", "passes", "why"), TABLE)
def test_the_gaia_scorer_follows_the_published_rules(
    answer: str, truth: str, passes: bool, why: str
) -> None:
    assert question_scorer(answer, truth) is passes, why
    score = grade(GraderSpec(id="gaia", config={"extract": "none"}), answer, _case(truth))
    assert score.status == "ok" and score.passed is passes, why


def _case(expected: str | None) -> Case:
    return Case(id="t", env={"kind": "prompt"}, task="?", expected=expected)


def test_the_table_covers_numbers_lists_and_strings() -> None:
    kinds = [answer_kind(truth) for _, truth, _, _ in TABLE]
    assert len(TABLE) >= 20
    assert {kinds.count(k) >= 5 for k in ("number", "list", "string")} == {True}


def test_normalize_number_str_returns_inf_for_text() -> None:
    assert normalize_number_str("$1,234%") == 1234.0
    assert normalize_number_str("n/a") == float("inf")


def test_split_string_splits_on_commas_and_semicolons() -> None:
    assert split_string("a, b;c") == ["a", " b", "c"]


def test_normalize_str_removes_whitespace_and_optionally_punctuation() -> None:
    assert normalize_str(" A b.\tC! ") == "abc"
    assert normalize_str(" A b.\tC! ", remove_punct=False) == "ab.c!"


def test_the_grader_scores_the_text_after_final_answer() -> None:
    prediction = "I searched the web.\nFINAL ANSWER: Sea gull"
    score = grade(GAIA, prediction, _case("seagull"))
    assert score.passed is True
    assert score.detail == {"model_answer": "Sea gull", "ground_truth": "seagull", "kind": "string"}


def test_without_a_marker_the_whole_prediction_is_the_answer() -> None:
    assert grade(GAIA, "$1,000", _case("1000")).passed is True
    assert grade(GAIA, "The answer is 1000", _case("1000")).passed is False


def test_extract_none_scores_the_prediction_as_given() -> None:
    spec = GraderSpec(id="gaia", config={"extract": "none"})
    assert grade(spec, "FINAL ANSWER: 5", _case("5")).passed is False
    assert grade(GAIA, "FINAL ANSWER: 5", _case("5")).passed is True


def test_a_case_without_a_final_answer_is_an_error() -> None:
    assert grade(GAIA, "5", _case(None)).status == "error"


def test_an_unknown_extract_mode_is_an_error() -> None:
    spec = GraderSpec(id="gaia", config={"extract": "last-line"})
    assert grade(spec, "5", _case("5")).status == "error"
