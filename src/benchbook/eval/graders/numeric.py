"""GSM8K-style numeric match (grader id ``numeric``).

Source: Cobbe et al., *Training Verifiers to Solve Math Word Problems*, 2021
(https://arxiv.org/abs/2110.14168) and the official code, ``grade_school_math/dataset.py`` in
https://github.com/openai/grade-school-math: ``extract_answer`` takes the number after ``#### ``
(pattern ``-?[0-9.,]+``), removes commas and compares it with the reference as text.

Benchbook's rule, for free-form agent answers (SPEC F/H):

1. **Where to look.** The text after the last ``FINAL ANSWER:`` (case-insensitive; the GAIA-style
   answer template), else after the last ``####`` (GSM8K's own marker), else the whole prediction.
2. **Which number.** After a marker: the marker text itself when it is one number once commas,
   ``$``, spaces and one trailing ``.`` are removed (``FINAL ANSWER: 1,000`` → 1000), else the
   first number in it. Without a marker: the *last* number in the prediction (``$1000.`` → 1000).
3. **Compare.** ``|prediction − expected| < tolerance`` (``config.tolerance``, default ``1e-6``),
   where ``expected`` (``config.expected`` or ``case.expected``) is read by the same rule 2 — a
   JSON number in ``case.expected`` is taken as that number, a boolean is not a number. Numbers
   are compared **exactly** as decimals (``Decimal``), never through floats, so
   ``7234019283746519040`` does not match ``7234019283746519283`` (floats would call them equal).

Numbers are plain decimals: an optional minus (``-`` or ``−``), digits with optional comma
grouping, an optional fraction. Exponents, ``inf``/``nan`` and digit underscores are not numbers.
No number in the prediction fails; a missing or non-numeric reference is ``status = error``.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

from pydantic import JsonValue

from benchbook.contracts.dataset import Case, GraderSpec
from benchbook.contracts.score import Score
from benchbook.eval.graders.verdicts import error, expected_text, verdict

DEFAULT_TOLERANCE = 1e-6
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
    """The number a free-form answer gives, by rules 1–2 of the module docstring; None if none."""
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


def _reference(spec: GraderSpec, case: Case) -> Decimal | str | None:
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
    return int(value) if value == value.to_integral_value() else float(value)


def grade_numeric(spec: GraderSpec, prediction: str, case: Case) -> Score:
    """Grade ``prediction`` against the case's numeric reference (module docstring rules).

    Returns a pass/fail :class:`Score` with ``detail = {extracted, expected, tolerance}``;
    ``status = error`` when the reference is missing or not a number, or ``config.tolerance`` is
    not a finite number ≥ 0.
    """
    tolerance = _tolerance(spec)
    if tolerance is None:
        return error(spec, "config.tolerance must be a finite number >= 0")
    expected = _reference(spec, case)
    if expected is None:
        return error(spec, "the case has no expected answer")
    if isinstance(expected, str):
        return error(spec, f"expected answer {expected[:80]!r} is not a number")
    extracted = extract_number(prediction)
    detail: dict[str, JsonValue] = {
        "extracted": _json_number(extracted),
        "expected": _json_number(expected),
        "tolerance": tolerance,
    }
    if extracted is None:
        return verdict(spec, False, {**detail, "reason": "no number in the prediction"})
    delta = abs(extracted - expected)
    return verdict(spec, delta == 0 or delta < Decimal(repr(tolerance)), detail)
