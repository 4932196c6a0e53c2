"""Numeric answer match (grader id ``numeric``): the field's reference extraction rules.

``config.mode`` picks the rule (default ``flexible-extract``); ``config.expected`` (text)
overrides ``case.expected``. Every mode extracts an answer from the prediction, normalizes it
and the reference the same way, and compares:

- ``flexible-extract`` (default) — lm-evaluation-harness's GSM8K filter ``flexible-extract``
  (``lm_eval/tasks/gsm8k/gsm8k.yaml``, lm-eval 0.4.x): ``RegexFilter`` with the pattern
  ``(-?[$0-9.,]{2,})|(-?[0-9]+)`` and ``group_select: -1`` — the **last** match, its first
  non-empty group, stripped; then ``take_first``.
- ``strict-match`` — the same file's filter ``strict-match``: the **first** match of
  ``#### (\\-?[0-9\\.\\,]+)`` (the GSM8K answer format of Cobbe et al. 2021,
  https://arxiv.org/abs/2110.14168).
- Both GSM8K modes then compare like gsm8k.yaml's ``exact_match`` metric
  (``exact_match_hf_evaluate``): from both sides remove the regexes ``,``, ``\\$``,
  ``(?s).*#### `` and ``\\.$``, lowercase, and require **equal strings**. So ``18.0`` does not
  match ``18`` and ``1234`` never matches ``234`` (no suffix of a longer number): exactly the
  counts lm-eval publishes. A reference that is the full GSM8K solution works (everything up
  to ``#### `` is removed); a JSON number in ``case.expected`` is its shortest text.
- ``math`` — Hendrycks MATH / Minerva (:mod:`benchbook.eval.graders.math_answer`): the last
  ``\\boxed{…}`` (nested braces), else Minerva's ``Final Answer: The final answer is X. I hope
  it is correct.``, else the whole answer; both sides through Minerva's
  ``normalize_final_answer``; equal text, or both numbers (``\\frac``/``\\dfrac`` read as
  rationals) of equal value.
- ``final-answer`` — Benchbook's own rule before issue 29, **not** a reference rule, kept for
  agents that answer ``FINAL ANSWER: …``: the text after the last ``FINAL ANSWER:``
  (case-insensitive), else after the last ``####``, else the last number; compared as exact
  decimals within ``config.tolerance`` (default ``1e-6``). ``tolerance`` is refused in the other
  modes (they compare text, as their references do).

No match (lm-eval's ``[invalid]``) fails with ``detail.reason``; a missing reference, or one
that yields no answer, is ``status = error``.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

from pydantic import JsonValue

from benchbook.contracts.dataset import Case, GraderSpec
from benchbook.contracts.score import Score
from benchbook.eval.graders.linear_rules import strip_through_last
from benchbook.eval.graders.math_answer import (
    final_answer_text,
    math_equivalent,
    normalize_final_answer,
)
from benchbook.eval.graders.verdicts import error, expected_text, verdict

MODES = ("flexible-extract", "strict-match", "math", "final-answer")
DEFAULT_MODE = "flexible-extract"
DEFAULT_TOLERANCE = 1e-6
INVALID = "[invalid]"
"""lm-eval's ``RegexFilter`` fallback when nothing matches."""
STRICT_PATTERN = re.compile(r"#### (\-?[0-9\.\,]+)")
FLEXIBLE_PATTERN = re.compile(r"(-?[$0-9.,]{2,})|(-?[0-9]+)")
EXACT_MATCH_IGNORE = (",", "\\$", "(?s).*#### ", "\\.$")
"""gsm8k.yaml's ``regexes_to_ignore`` for ``exact_match`` (applied in this order)."""


def regex_filter(text: str, pattern: re.Pattern[str], group_select: int) -> str:
    """lm-eval's ``RegexFilter.apply`` on one response: ``findall``, the ``group_select``-th
    match, its first non-empty group when the pattern has groups, stripped; :data:`INVALID`
    when nothing matches."""
    matches = pattern.findall(text)
    if not matches:
        return INVALID
    match = matches[group_select]
    if isinstance(match, tuple):
        match = next((m for m in match if m), INVALID)
    return str(match).strip()


def gsm8k_normalize(text: str) -> str:
    """gsm8k.yaml's ``exact_match`` preprocessing: :data:`EXACT_MATCH_IGNORE` removed in order,
    lowercased. ``(?s).*#### `` runs as :func:`strip_through_last` (same result, one pass: the
    regex tries every start and scans to the end, quadratic — 26 s for a 400 kB answer)."""
    text = text.replace(",", "").replace("$", "")
    text = strip_through_last(text, "#### ")
    return re.sub(r"\.$", "", text).lower()


# ---- mode final-answer (Benchbook's rule before issue 29) ----------------------------------
_FINAL_ANSWER = re.compile(r"final\s*answer\s*:", re.IGNORECASE)
_GSM8K_MARKER = re.compile(r"####")
# A minus only when it is not a hyphen inside a word or range ("10-12" is 10 and 12).
_NUMBER = re.compile(r"(?<![\w.])(?:[-−]\s?)?\$?(?:[-−])?(?:\d[\d,]*(?:\.\d+)?|\.\d+)")
_PLAIN = re.compile(r"-?(?:\d+(?:\.\d*)?|\.\d+)")


def parse_number(text: str) -> Decimal | None:
    """``text`` as one number after removing commas, ``$``, whitespace and one trailing ``.``.

    Returns None when what is left is not a plain decimal (``"1e3"``, ``"inf"``, ``"12 apples"``).
    """
    cleaned = re.sub(r"[,$\s]", "", text).replace("−", "-")
    if cleaned.endswith("."):
        cleaned = cleaned[:-1]
    if cleaned.startswith("-") and cleaned[1:].startswith("-"):
        return None
    return Decimal(cleaned) if _PLAIN.fullmatch(cleaned) else None


def _numbers(text: str) -> list[Decimal]:
    found = (parse_number(m.group(0)) for m in _NUMBER.finditer(text))
    return [n for n in found if n is not None]


def extract_number(text: str) -> Decimal | None:
    """The number a free-form answer gives under mode ``final-answer``; None if none."""
    markers = list(_FINAL_ANSWER.finditer(text)) or list(_GSM8K_MARKER.finditer(text))
    if markers:
        tail = text[markers[-1].end() :]
        whole = parse_number(tail)
        if whole is not None:
            return whole
        numbers = _numbers(tail)
        return numbers[0] if numbers else None
    numbers = _numbers(text)
    return numbers[-1] if numbers else None


def _tolerance(spec: GraderSpec) -> float | None:
    value = spec.config.get("tolerance", DEFAULT_TOLERANCE)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def _decimal_reference(spec: GraderSpec, case: Case) -> Decimal | str | None:
    """The expected number, or the text that is not one (for the error), or None when absent."""
    value = case.expected
    if "expected" not in spec.config and not isinstance(value, bool) and isinstance(value, int):
        return Decimal(value)
    if "expected" not in spec.config and isinstance(value, float):
        return Decimal(repr(value))  # the shortest text of the JSON number, as written
    reference = expected_text(spec, case)
    if reference is None:
        return None
    number = extract_number(reference)
    return reference if number is None else number


def _json_number(value: Decimal | None) -> JsonValue:
    """A detail value: an integral decimal as an exact int, otherwise a float."""
    if value is None:
        return None
    # int(Decimal) is quadratic in the digits (2 s for 300,000): exact ints up to 18 digits.
    if value.adjusted() < 18 and value == value.to_integral_value():
        return int(value)
    number = float(value)
    return number if math.isfinite(number) else None


def _grade_final_answer(spec: GraderSpec, prediction: str, case: Case) -> Score:
    tolerance = _tolerance(spec)
    if tolerance is None:
        return error(spec, "config.tolerance must be a finite number >= 0")
    expected = _decimal_reference(spec, case)
    if expected is None:
        return error(spec, "the case has no expected answer")
    if isinstance(expected, str):
        return error(spec, f"expected answer {expected[:80]!r} is not a number")
    extracted = extract_number(prediction)
    detail: dict[str, JsonValue] = {
        "mode": "final-answer",
        "extracted": _json_number(extracted),
        "expected": _json_number(expected),
        "tolerance": tolerance,
    }
    if extracted is None:
        return verdict(spec, False, {**detail, "reason": "no number in the prediction"})
    delta = abs(extracted - expected)
    return verdict(spec, delta == 0 or delta < Decimal(repr(tolerance)), detail)


# ---- reference modes -----------------------------------------------------------------------
def _reference_text(spec: GraderSpec, case: Case) -> str | None:
    if "expected" not in spec.config and isinstance(case.expected, float):
        return repr(case.expected)
    return expected_text(spec, case)


def extract_answer(mode: str, text: str) -> str:
    """The answer ``mode`` extracts from ``text`` (:data:`INVALID` when a GSM8K filter finds
    nothing); for ``math`` the boxed / stated answer, not yet normalized."""
    if mode == "strict-match":
        return regex_filter(text, STRICT_PATTERN, 0)
    if mode == "flexible-extract":
        return regex_filter(text, FLEXIBLE_PATTERN, -1)
    return final_answer_text(text)


def _grade_reference_mode(spec: GraderSpec, mode: str, prediction: str, case: Case) -> Score:
    reference = _reference_text(spec, case)
    if reference is None:
        return error(spec, "the case has no expected answer")
    if "expected" not in spec.config and isinstance(case.expected, bool):
        return error(spec, f"expected answer {case.expected} is a boolean, not a number")
    if mode == "math":
        expected = normalize_final_answer(final_answer_text(reference))
        extracted = final_answer_text(prediction)
        got = normalize_final_answer(extracted)
        detail: dict[str, JsonValue] = {
            "mode": mode,
            "extracted": extracted,
            "normalized_prediction": got,
            "expected": reference,
            "normalized_expected": expected,
        }
        if not expected:
            return error(spec, f"expected answer {reference[:80]!r} normalizes to nothing", detail)
        return verdict(spec, math_equivalent(got, expected), detail)
    expected = gsm8k_normalize(reference)
    extracted = extract_answer(mode, prediction)
    detail = {"mode": mode, "extracted": extracted, "expected": reference,
              "normalized_expected": expected}  # fmt: skip
    if not expected.strip():
        return error(spec, f"expected answer {reference[:80]!r} normalizes to nothing", detail)
    if extracted == INVALID:
        reason = "no '#### N' in the prediction" if mode == "strict-match" else "no number"
        return verdict(spec, False, {**detail, "reason": reason})
    got = gsm8k_normalize(extracted)
    return verdict(spec, got == expected, {**detail, "normalized_prediction": got})


def config_problem(spec: GraderSpec) -> tuple[str, str] | None:
    """``(key, message)`` for a config no case could be graded with (an unknown ``mode``, a
    ``tolerance`` that is not a finite number >= 0 or given outside mode ``final-answer``);
    None when it is usable. A plan is refused with it before any case runs."""
    mode = spec.config.get("mode", DEFAULT_MODE)
    if not isinstance(mode, str) or mode not in MODES:
        return "mode", f"must be one of {', '.join(MODES)} (got {mode!r})"
    if mode == "final-answer" and _tolerance(spec) is None:
        return "tolerance", "must be a finite number >= 0"
    if mode != "final-answer" and "tolerance" in spec.config:
        return "tolerance", f"applies to mode final-answer only, not {mode}"
    return None


def grade_numeric(spec: GraderSpec, prediction: str, case: Case) -> Score:
    """Grade ``prediction`` against the case's reference under ``config.mode`` (module
    docstring).

    Returns a pass/fail :class:`Score` with ``detail = {mode, extracted, expected, …}``;
    ``status = error`` for an unknown mode, a ``tolerance`` outside mode ``final-answer``, a
    missing reference or one that yields no answer.
    """
    mode = spec.config.get("mode", DEFAULT_MODE)
    if not isinstance(mode, str) or mode not in MODES:
        return error(spec, f"config.mode must be one of {', '.join(MODES)}")
    if mode == "final-answer":
        return _grade_final_answer(spec, prediction, case)
    if "tolerance" in spec.config:
        return error(
            spec,
            f"config.tolerance applies to mode final-answer only; mode {mode} compares text as "
            "its reference does (the default mode is flexible-extract since issue 29: set "
            'mode "final-answer" to keep the former rule)',
        )
    return _grade_reference_mode(spec, mode, prediction, case)
