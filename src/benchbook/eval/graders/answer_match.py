"""Answer match (grader id ``answer-match``): exact, contains or normalized comparison.

``config``: ``mode`` = ``exact`` (default) | ``contains`` | ``normalized``; ``expected`` (text)
overrides the case's ``expected``. Modes:

- ``exact`` — the prediction equals the reference after stripping surrounding whitespace.
- ``contains`` — the stripped reference occurs in the prediction (case-sensitive).
- ``normalized`` — both sides in Unicode NFKC, case-folded, punctuation and symbols (Unicode
  categories ``P*``/``S*``) turned into spaces, whitespace collapsed, then compared for equality.
  With ``config.contains = true`` the normalized reference need only occur in the normalized
  prediction, on word boundaries.
"""

from __future__ import annotations

import unicodedata

from pydantic import JsonValue

from benchbook.contracts.dataset import Case, GraderSpec
from benchbook.contracts.score import Score
from benchbook.eval.graders.verdicts import error, expected_text, verdict

MODES = ("exact", "contains", "normalized")


def normalize_answer(text: str) -> str:
    """NFKC, case-folded, punctuation/symbols as spaces, whitespace collapsed and stripped."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    kept = (" " if unicodedata.category(ch)[0] in "PS" else ch for ch in folded)
    return " ".join("".join(kept).split())


def answers_match(prediction: str, reference: str, mode: str, contains: bool = False) -> bool:
    """Whether ``prediction`` matches ``reference`` in ``mode`` (see the module docstring)."""
    if mode == "exact":
        return prediction.strip() == reference.strip()
    if mode == "contains":
        return reference.strip() in prediction
    norm_prediction, norm_reference = normalize_answer(prediction), normalize_answer(reference)
    if contains:
        return f" {norm_reference} " in f" {norm_prediction} "
    return norm_prediction == norm_reference


def grade_answer_match(spec: GraderSpec, prediction: str, case: Case) -> Score:
    """Grade ``prediction`` against ``config.expected`` or ``case.expected``.

    Returns a pass/fail :class:`Score` (``detail = {mode, expected}``); ``status = error`` for an
    unknown mode or when there is no reference.
    """
    mode = spec.config.get("mode", "exact")
    if not isinstance(mode, str) or mode not in MODES:
        return error(spec, f"config.mode must be one of {', '.join(MODES)}")
    reference = expected_text(spec, case)
    if reference is None:
        return error(spec, "the case has no expected answer and config.expected is not set")
    contains = spec.config.get("contains") is True
    detail: dict[str, JsonValue] = {"mode": mode, "expected": reference}
    if mode == "normalized":
        detail["normalized_prediction"] = normalize_answer(prediction)
        detail["normalized_expected"] = normalize_answer(reference)
    return verdict(spec, answers_match(prediction, reference, mode, contains), detail)
