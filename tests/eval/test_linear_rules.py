"""The graders' reference-rule regexes on long answers (security finding: a 400 kB answer froze
the server for 26 s in ``(?s).*#### ``). Each linear replacement equals its regex on random
short strings (hypothesis), and every answer grader finishes a 1 MB adversarial answer under a
generous ``signal.alarm`` hang guard (not a speed test: the regexes took minutes to hours)."""

from __future__ import annotations

import re
import signal
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchbook.contracts import Case, GraderSpec
from benchbook.eval.graders import grade
from benchbook.eval.graders.linear_rules import (
    brace_sqrt_index,
    keep_between_dollars,
    search_lazy_sentence,
    strip_through_last,
    unwrap_boxed_greedy,
    unwrap_lazy,
)
from benchbook.eval.graders.numeric import EXACT_MATCH_IGNORE, gsm8k_normalize

GSM8K_TEXT = st.text(alphabet="#4 \n2a.,$", max_size=40)


def _pieces(*pieces: str, max_size: int) -> st.SearchStrategy[str]:
    """Strings glued from ``pieces`` (whole tokens, so the rules' keywords occur often)."""
    return st.lists(st.sampled_from(pieces), max_size=max_size).map("".join)


MATH_TEXT = _pieces("$", "}", "{", "\n", "a", "1", " ", "]", "[", "\\text{", "\\boxed{", "sqrt[",
                    "sqrt", "\\overline{", "-", "_", max_size=14)  # fmt: skip
SENTENCE = "Final Answer: The final answer is"
SENTENCE_TEXT = _pieces(SENTENCE, " I hope it is correct", ".", "\n", "x", " ",
                        "I hope it is correct.", max_size=8)  # fmt: skip


@given(GSM8K_TEXT)
@settings(max_examples=400)
def test_strip_through_last_equals_the_regex(text: str) -> None:
    assert strip_through_last(text, "#### ") == re.sub("(?s).*#### ", "", text)


@given(GSM8K_TEXT)
@settings(max_examples=400)
def test_gsm8k_normalize_equals_lm_eval_regexes_to_ignore(text: str) -> None:
    expected = text
    for pattern in EXACT_MATCH_IGNORE:
        expected = re.sub(pattern, "", expected)
    assert gsm8k_normalize(text) == expected.lower()


@given(MATH_TEXT)
@settings(max_examples=400)
def test_minerva_substitutions_equal_their_regexes(text: str) -> None:
    assert keep_between_dollars(text) == re.sub(r"(.*?)(\$)(.*?)(\$)(.*)", "$\\3$", text)
    for command in ("text", "textbf", "overline"):
        regex = re.sub(rf"(\\{command}\{{)(.*?)(\}})", "\\2", text)
        assert unwrap_lazy(text, command) == regex
    assert unwrap_boxed_greedy(text) == re.sub(r"(\\boxed\{)(.*)(\})", "\\2", text)
    assert brace_sqrt_index(text) == re.sub(r"(sqrt)(\[[^\]]*\])(\w)", "\\1\\2{\\3}", text)


@given(SENTENCE_TEXT)
@settings(max_examples=400)
def test_final_sentence_search_equals_minervas_regex(text: str) -> None:
    match = re.search(r"Final Answer: The final answer is(.*?). I hope it is correct.", text)
    found = search_lazy_sentence(text, SENTENCE, " I hope it is correct")
    assert found == (match.group(1) if match else None)


class Hung(BaseException):
    """Not an Exception: ``grade`` turns every Exception into an error score."""


@contextmanager
def hang_guard(seconds: int) -> Iterator[None]:
    """Fail when the block runs longer than ``seconds`` (raised when control is back in Python:
    a C-level ``re`` match that never returns still hangs, so keep the inputs fixed)."""

    def _expire(signum: int, frame: object) -> None:
        raise Hung(f"still running after {seconds} s: super-linear?")

    previous = signal.signal(signal.SIGALRM, _expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


ANSWER_SPECS = [
    *({"id": "numeric", "config": {"mode": m}} for m in
      ("flexible-extract", "strict-match", "math", "final-answer")),
    *({"id": "answer-match", "config": {"mode": m}} for m in ("exact", "contains", "normalized")),
    {"id": "gaia", "config": {}},
]  # fmt: skip
UNITS = ["2", "1,", "-$", ",.", "a", "\\boxed{", "\\text{", "sqrt[", "$1", "final ", SENTENCE]


@pytest.mark.parametrize("spec", ANSWER_SPECS, ids=lambda s: f"{s['id']}-{s['config']}")
def test_a_1_mb_answer_grades_in_bounded_time(spec: dict[str, object]) -> None:
    case = Case(id="c", env={"kind": "prompt"}, task="How many?", expected="18")
    grader = GraderSpec.model_validate(spec)
    for unit in UNITS:
        answer = (unit * (1_000_000 // len(unit) + 1))[:1_000_000]
        with hang_guard(10):  # about 1 s at most now; 25 s to hours before the fix
            score = grade(grader, answer, case)
        assert score.status in ("ok", "error"), (unit, score)
