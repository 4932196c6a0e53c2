"""Issue 29 §1: ``numeric`` and ``answer-match normalized`` equal the field's reference code.

Every expected value here is produced by the reference implementation itself, run in the test:

- GSM8K: lm-evaluation-harness's ``RegexFilter`` with the ``strict-match`` and
  ``flexible-extract`` patterns read from its own ``tasks/gsm8k/gsm8k.yaml``, then its
  ``exact_match_hf_evaluate`` with that file's ``regexes_to_ignore`` and ``ignore_case``.
- MATH: lm-eval's ``tasks/minerva_math/utils.py`` functions ``last_boxed_only_string``,
  ``remove_boxed`` and ``normalize_final_answer`` (with the Minerva lists), taken from the
  installed file's source: importing the module needs ``math_verify`` and antlr 4.11, which only
  its sympy comparison uses.
- SQuAD: the official v1.1 ``normalize_answer``, as lm-eval ships it verbatim in
  ``tasks/qasper/metrics.py`` ("Taken from the official evaluation script for v1.1").

Tricky vectors come from the issue trackers: a comma after the final number (stanford-crfm/helm
#4337, jundot/omlx #3484), ``\\boxed{$9{,}500}`` and ``\\boxed{8,000}`` (open-compass #2647),
signed answers (google-deepmind/proeval #19), ``13.20%`` (mbzuai-nlp/finchain #3); for SQuAD an
answer that is only an article (OpenBMB/UltraRAG #509), the en dash SQuAD keeps
(deepset-ai/haystack #2508), apostrophes (Pharaoh-Labs/teamarr #653).
"""

from __future__ import annotations

import ast
import re
import unicodedata
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchbook.contracts import Case, GraderSpec
from benchbook.eval.graders import grade
from benchbook.eval.graders.answer_match import normalize_answer
from benchbook.eval.graders.math_answer import last_boxed, normalize_final_answer

lm_eval = pytest.importorskip("lm_eval", reason="lm-eval is a dev dependency (reference vectors)")
from lm_eval.api.metrics import exact_match_hf_evaluate  # noqa: E402
from lm_eval.filters.extraction import RegexFilter  # noqa: E402
from lm_eval.tasks.qasper.metrics import normalize_answer as squad_normalize_answer  # noqa: E402

TASKS = Path(lm_eval.__file__).parent / "tasks"
GSM8K = yaml.safe_load((TASKS / "gsm8k" / "gsm8k.yaml").read_text())


def _filter(name: str) -> RegexFilter:
    entry = next(f for f in GSM8K["filter_list"] if f["name"] == name)
    regex = entry["filter"][0]
    assert regex["function"] == "regex" and entry["filter"][1]["function"] == "take_first"
    return RegexFilter(
        regex_pattern=regex["regex_pattern"], group_select=regex.get("group_select", 0)
    )


def lm_eval_gsm8k(mode: str, prediction: str, target: str) -> tuple[str, bool]:
    """(filtered answer, exact match) exactly as lm-eval scores one GSM8K response."""
    [[extracted]] = _filter(mode).apply([[prediction]], [{}])
    metric = next(m for m in GSM8K["metric_list"] if m["metric"] == "exact_match")
    score = exact_match_hf_evaluate(
        predictions=[extracted],
        references=[target],
        regexes_to_ignore=metric["regexes_to_ignore"],
        ignore_case=metric["ignore_case"],
        ignore_punctuation=metric["ignore_punctuation"],
    )
    return extracted, bool(score["exact_match"] == 1.0)


def _minerva() -> dict[str, Any]:
    source = (TASKS / "minerva_math" / "utils.py").read_text()
    wanted = {"last_boxed_only_string", "remove_boxed", "normalize_final_answer"}
    keep = [
        node
        for node in ast.parse(source).body
        if (isinstance(node, ast.FunctionDef) and node.name in wanted)
        or (
            isinstance(node, ast.Assign)
            and any(
                getattr(t, "id", "") in ("SUBSTITUTIONS", "REMOVED_EXPRESSIONS")
                for t in node.targets
            )
        )
    ]
    assert len(keep) == 5, "lm-eval's minerva_math/utils.py changed shape"
    namespace: dict[str, Any] = {"re": re}
    exec(
        compile(ast.Module(body=keep, type_ignores=[]), "minerva_math/utils.py", "exec"), namespace
    )
    return namespace


MINERVA = _minerva()


def _case(expected: Any) -> Case:
    return Case(id="q", env={"kind": "prompt"}, task="How many?", expected=expected)


# (prediction, expected) — graded in both GSM8K modes; lm-eval decides what passes.
GSM8K_VECTORS = [
    ("Natalia sold 48 + 24 = 72 clips.\n#### 72", "72"),
    ("#### 72", "Natalia sold 48/2 = <<48/2=24>>24 clips in May.\n#### 72"),
    ("The answer is 72.", "72"),
    ("The total is 72 clips, altogether.", "72"),
    ("The answer is 72, in total, so the farmer earns that much.", "72"),
    ("The answer is 72, which is the total.", "72"),
    ("#### 1,000", "1000"),
    ("The total is $1,000.", "1000"),
    ("He paid $1,234.50 in total.", "1234.50"),
    ("He paid $1,234.50 in total.", "1234.5"),
    ("The temperature fell to -5 degrees.", "-5"),
    ("#### -3", "-3"),
    ("#### -3", "3"),
    ("The answer is 18.0", "18"),
    ("#### 18.00", "18"),
    ("The answer is 1234", "234"),
    ("#### 1234", "34"),
    ("It takes 10-12 days", "12"),
    ("It takes 10-12 days", "-12"),
    ("The rate is 13.20%", "13.20"),
    ("I think 41, no wait. #### 42", "42"),
    ("#### 42\nActually 43.", "42"),
    ("#### 5 #### 6", "5"),
    ("####72", "72"),
    ("I cannot tell.", "7"),
    ("", "7"),
    ("The answer is seven.", "7"),
    ("Each costs .5 dollars", "0.5"),
    ("Each costs 0.5 dollars", "0.5"),
    ("The answer is 2,125", "2,125"),
    ("There are 5 apples.", "5"),
    ("1. First step: 3 + 4 = 7.", "7"),
    ("The final answer is $\\boxed{9500}$", "9500"),
    ("So we get 3 x 6 = 18 cookies.\n", "18"),
]


@pytest.mark.parametrize("mode", ["strict-match", "flexible-extract"])
@pytest.mark.parametrize(("prediction", "expected"), GSM8K_VECTORS)
def test_the_gsm8k_modes_score_exactly_like_lm_eval(
    mode: str, prediction: str, expected: str
) -> None:
    extracted, passes = lm_eval_gsm8k(mode, prediction, expected)
    score = grade(GraderSpec(id="numeric", config={"mode": mode}), prediction, _case(expected))
    assert score.status == "ok", score.detail
    assert score.detail["extracted"] == extracted
    assert score.passed is passes


def test_the_default_mode_is_flexible_extract() -> None:
    for prediction, expected in GSM8K_VECTORS:
        _, passes = lm_eval_gsm8k("flexible-extract", prediction, expected)
        assert grade(GraderSpec(id="numeric"), prediction, _case(expected)).passed is passes


def test_a_longer_number_never_matches_by_its_suffix_in_any_mode() -> None:
    for mode in ("strict-match", "flexible-extract", "math"):
        spec = GraderSpec(id="numeric", config={"mode": mode})
        for prediction in ("#### 1234", "The answer is 1234", "\\boxed{1234}"):
            assert grade(spec, prediction, _case("234")).passed is False, (mode, prediction)


def test_a_json_number_reference_is_its_shortest_text() -> None:
    spec = GraderSpec(id="numeric", config={"mode": "flexible-extract"})
    assert grade(spec, "It is 2.5", _case(2.5)).passed is True
    assert grade(spec, "It is 72.", _case(72)).passed is True


def test_tolerance_outside_final_answer_is_an_error_naming_the_change() -> None:
    score = grade(GraderSpec(id="numeric", config={"tolerance": 1e-6}), "#### 3", _case("3"))
    assert score.status == "error" and "final-answer" in score.detail["error"]
    legacy = GraderSpec(id="numeric", config={"mode": "final-answer", "tolerance": 1e-6})
    assert grade(legacy, "FINAL ANSWER: 18 (that is 3 x 6)", _case("18")).passed is True


# MATH answers: (model output, reference solution or answer)
MATH_VECTORS = [
    ("So the answer is $\\boxed{\\frac{1}{2}}$.", "\\frac{1}{2}"),
    ("$\\boxed{\\dfrac{1}{2}}$", "\\frac{1}{2}"),
    ("$\\boxed{0.5}$", "\\frac{1}{2}"),
    ("$\\boxed{\\frac12}$", "\\frac{1}{2}"),
    ("$\\boxed{-\\frac{2}{3}}$", "-\\frac{2}{3}"),
    ("$\\boxed{\\frac{2}{3}}$", "-\\frac{2}{3}"),
    ("\\boxed{\\$9{,}500}", "9500"),
    ("\\boxed{8,000}", "8000"),
    ("\\boxed{10,000}", "10000"),
    ("\\boxed{1,\\!000}", "1000"),
    ("\\boxed{(0,1)}", "(0,1)"),
    ("\\boxed{0,1}", "1"),
    ("\\boxed{5\\text{ cm}}", "5"),
    ("\\boxed{5 \\text{ inches}}", "5"),
    ("\\boxed{90^\\circ}", "90"),
    ("\\boxed{\\text{(A)}}", "(A)"),
    ("\\boxed{x = 3}", "3"),
    ("\\boxed{\\sqrt{2}}", "\\sqrt2"),
    ("\\boxed{\\left( 3, \\frac{\\pi}{2} \\right)}", "\\left( 3, \\frac{\\pi}{2} \\right)"),
    ("\\boxed{[2,5)}", "[2,5)"),
    ("First \\boxed{3}, then \\boxed{4}", "4"),
    ("Final Answer: The final answer is $24$. I hope it is correct.", "24"),
    ("Final Answer: The final answer is $-\\frac{2}{3}$. I hope it is correct.", "-\\frac{2}{3}"),
    ("$2\\cdot15\\cdot n=30n$ so $n=\\boxed{16}$", "16"),
    ("\\boxed{16.0}", "16"),
    ("\\boxed{1234}", "234"),
]


@pytest.mark.parametrize(("prediction", "reference"), MATH_VECTORS)
def test_math_normalization_equals_minerva_in_lm_eval(prediction: str, reference: str) -> None:
    boxed = MINERVA["last_boxed_only_string"](prediction)
    if boxed is not None:
        assert last_boxed(prediction) == MINERVA["remove_boxed"](boxed)
    for text in (prediction, reference, last_boxed(prediction) or prediction):
        assert normalize_final_answer(text) == MINERVA["normalize_final_answer"](text)
    score = grade(GraderSpec(id="numeric", config={"mode": "math"}), prediction, _case(reference))
    assert score.status == "ok", score.detail
    ours, theirs = score.detail["normalized_prediction"], score.detail["normalized_expected"]
    if ours == theirs:  # lm-eval's is_equiv: identical normalized strings match
        assert score.passed is True


MATH_VERDICTS = {
    "So the answer is $\\boxed{\\frac{1}{2}}$.": True,
    "$\\boxed{\\dfrac{1}{2}}$": True,
    "$\\boxed{0.5}$": True,
    "$\\boxed{\\frac12}$": True,
    "$\\boxed{\\frac{2}{3}}$": False,
    "\\boxed{\\$9{,}500}": True,
    "\\boxed{0,1}": False,
    "\\boxed{5\\text{ cm}}": True,
    "\\boxed{x = 3}": True,
    "\\boxed{16.0}": True,
    "\\boxed{1234}": False,
    "First \\boxed{3}, then \\boxed{4}": True,
}


def test_math_numbers_compare_as_rationals_and_thin_spaces_are_separators() -> None:
    spec = GraderSpec(id="numeric", config={"mode": "math"})
    for prediction, reference in MATH_VECTORS:
        if prediction in MATH_VERDICTS:
            assert grade(spec, prediction, _case(reference)).passed is MATH_VERDICTS[prediction]
    assert grade(spec, "\\boxed{1\\,000}", _case("1000")).passed is True
    assert grade(spec, "\\boxed{1\\!000}", _case("1000")).passed is True
    assert grade(spec, "\\boxed{\\frac{1}{0}}", _case("\\frac{1}{0}")).passed is True  # same text


SQUAD_VECTORS = [
    "The Cat",
    "the cat",
    "cat",
    "A cat.",
    "an apple",
    "The  quick   brown fox",
    "U.S.A.",
    "USA",
    "Theater",
    "theatre",
    "the the the",
    "Anatomy of a Murder",
    "An Anatomy",
    "a/b",
    "1/2",
    "12",
    "Don't stop!",
    "dont stop",
    "(Paris)",
    "Paris, France",
    "paris france",
    "  spaced\tout\nanswer ",
    "São Paulo",
    "Sa\u0303o Paulo",
    "Straße",
    "strasse",
    "¿Qué?",
    "Ünïcödé—dash",
    "café",
    "cafe\u0301",
    "THE END.",
    "Theend",
    "$1,000",
    "1000",
    "“quoted”",
    "'quoted'",
    "A",
    "",
    "1990–1995",  # SQuAD keeps the en dash (deepset-ai/haystack #2508)
    "1990-1995",
    "Hawai'i",  # the apostrophe goes, no space left (Pharaoh-Labs/teamarr #653)
    "hawaii",
    "The",
]


@pytest.mark.parametrize("text", SQUAD_VECTORS)
def test_normalized_is_squads_normalize_answer_after_nfc(text: str) -> None:
    assert normalize_answer(text) == squad_normalize_answer(unicodedata.normalize("NFC", text))


def test_normalized_mode_matches_exactly_when_squads_normalizations_are_equal() -> None:
    spec = GraderSpec(id="answer-match", config={"mode": "normalized"})
    pairs = [(a, b) for a in SQUAD_VECTORS for b in SQUAD_VECTORS[:12]]
    for prediction, reference in pairs:
        nfc = [unicodedata.normalize("NFC", t) for t in (prediction, reference)]
        expected = squad_normalize_answer(nfc[0]) == squad_normalize_answer(nfc[1])
        if not squad_normalize_answer(nfc[1]):
            continue  # a reference normalizing to nothing is an error (next test)
        assert grade(spec, prediction, _case(reference)).passed is expected, (prediction, reference)
    assert grade(spec, "cafe\u0301", _case("café")).passed is True  # NFC first
    assert grade(spec, "Straße", _case("strasse")).passed is False  # no case folding


def test_a_reference_that_normalizes_to_nothing_is_an_error_not_a_match() -> None:
    # SQuAD would score "The" against "A" as a match (OpenBMB/UltraRAG #509).
    spec = GraderSpec(id="answer-match", config={"mode": "normalized"})
    assert squad_normalize_answer("The") == squad_normalize_answer("A") == ""
    score = grade(spec, "The", _case("A"))
    assert score.status == "error" and score.passed is None


def test_exact_stays_byte_exact_apart_from_surrounding_whitespace() -> None:
    spec = GraderSpec(id="answer-match", config={"mode": "exact"})
    assert grade(spec, "Paris\n", _case("Paris")).passed is True
    assert grade(spec, "paris", _case("Paris")).passed is False
    assert grade(spec, "cafe\u0301", _case("café")).passed is False
