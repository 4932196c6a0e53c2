"""User-supplied patterns are matched in bounded time and fail closed (security finding: a
member's ``regex`` pattern with catastrophic backtracking froze the server for 90 s+)."""

from __future__ import annotations

import re
import time

import pytest

from benchbook.contracts import Case, GraderSpec
from benchbook.datasets.mapping import RowError
from benchbook.eval.graders import grade
from benchbook.user_patterns import PatternTimeout, UserPattern
from tests.eval.test_linear_rules import hang_guard

CASE = Case(id="c", env={"kind": "prompt"}, task="t", expected="x")
# Exponential in the backtracking engines (re; and regex, which optimizes the tester's pattern).
EXPONENTIAL = "(a|aa)+b"


def test_a_catastrophic_pattern_is_a_grader_error_naming_the_time_bound() -> None:
    spec = GraderSpec(id="regex", config={"pattern": EXPONENTIAL})
    with hang_guard(60):  # re needs centuries for 80 characters
        score = grade(spec, "a" * 80, CASE)
    assert score.status == "error" and score.passed is None
    assert score.detail["error"] == "regex grader: pattern took longer than 2 s on this answer"


def test_the_testers_pattern_finishes_and_fails() -> None:
    spec = GraderSpec(id="regex", config={"pattern": "^(?:.?){12}(?:.?){12}(?:.?){12}Z"})
    with hang_guard(60):
        score = grade(spec, "a" * 16, CASE)
    assert score.status == "ok" and score.passed is False


def test_a_bounded_match_lets_go_of_the_gil() -> None:
    """Another thread keeps running while a user pattern runs out of time."""
    import threading

    ticks = 0
    done = threading.Event()

    def count() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            time.sleep(0.001)

    thread = threading.Thread(target=count)
    thread.start()
    try:
        with hang_guard(60), pytest.raises(PatternTimeout):
            UserPattern(EXPONENTIAL).search("a" * 80, timeout_s=0.5)
    finally:
        done.set()
        thread.join()
    assert ticks > 50  # ~500 with the GIL released; 0-2 if the match held it


@pytest.mark.parametrize(
    ("pattern", "flags", "text"),
    [
        (r"(\d+)", 0, "ab 42 c"),
        (r"^b", re.MULTILINE, "a\nb"),
        (r"A.B", re.IGNORECASE | re.DOTALL, "a\nb"),
        (r"(x)?y", 0, "y"),
    ],
)
def test_a_user_pattern_matches_what_re_matches(pattern: str, flags: int, text: str) -> None:
    ours, theirs = UserPattern(pattern, flags).search(text), re.search(pattern, text, flags)
    assert (ours is None) == (theirs is None)
    if ours is not None and theirs is not None:
        assert ours.group(0) == theirs.group(0)


def test_syntax_is_pythons_re() -> None:
    with pytest.raises(re.error):
        UserPattern(r"\p{L}")  # the regex package knows it; re does not
    with pytest.raises(re.error):
        UserPattern("[unclosed")


def test_an_answer_pattern_out_of_time_is_a_row_error() -> None:
    from benchbook.contracts.recipe import Mapping
    from benchbook.datasets.mapping import CaseBuilder

    mapping = Mapping(task_field="q", answer_field="a", answer_pattern=EXPONENTIAL)
    builder = CaseBuilder(mapping, "d")
    with hang_guard(60), pytest.raises(RowError, match="took longer than 2 s on field 'a'"):
        builder.build(0, {"q": "question", "a": "a" * 80})
