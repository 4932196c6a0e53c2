"""Answer match (grader id ``answer-match``): exact, contains or normalized comparison.

``config``: ``mode`` = ``exact`` (default) | ``contains`` | ``normalized``; ``expected`` (text)
overrides the case's ``expected``. Modes:

- ``exact`` — the prediction equals the reference after stripping surrounding whitespace
  (byte-exact otherwise: no case folding, no Unicode normalization).
- ``contains`` — the stripped reference occurs in the prediction (case-sensitive).
- ``normalized`` — SQuAD v1.1's official ``normalize_answer`` (Rajpurkar et al. 2016,
  https://arxiv.org/abs/1606.05250; ``evaluate-v1.1.py``, the rule SQuAD, TriviaQA, Natural
  Questions and most QA benchmarks report exact match with) applied to both sides after Unicode
  NFC: lowercase (``str.lower``), remove every ASCII punctuation character
  (``string.punctuation``; nothing is put in its place, so ``U.S.A.`` → ``usa``), remove the
  whole words ``a``/``an``/``the`` (``\b(a|an|the)\b``), collapse whitespace; then compare
  for equality. With ``config.contains = true`` the normalized reference need only occur in the
  normalized prediction, on word boundaries. A reference that normalizes to nothing (``A``,
  ``The``, ``?``) is ``status = error``: SQuAD's rule would match it with any answer that also
  normalizes to nothing (OpenBMB/UltraRAG #509).

Until issue 29 ``normalized`` used NFKC, case folding, all Unicode punctuation and symbols turned
into spaces and kept articles; it now equals SQuAD's rule (``U.S.`` and ``US`` match, ``the
cat`` and ``cat`` match, ``1/2`` and ``12`` match; ``ß`` and ``ss`` no longer do).
"""

from __future__ import annotations

import re
import string
import unicodedata

from pydantic import JsonValue

from benchbook.contracts.dataset import Case, GraderSpec
from benchbook.contracts.score import Score
from benchbook.eval.graders.verdicts import error, expected_text, verdict

MODES = ("exact", "contains", "normalized")


_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(text: str) -> str:
    """SQuAD v1.1's ``normalize_answer`` after NFC (module docstring): lower, punctuation
    removed, articles removed, whitespace collapsed — in SQuAD's order."""
    lowered = unicodedata.normalize("NFC", text).lower()
    no_punctuation = "".join(ch for ch in lowered if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", no_punctuation).split())


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
        if not detail["normalized_expected"]:
            # SQuAD would match any answer that also normalizes to nothing ("The" == "A")
            return error(spec, f"expected answer {reference[:80]!r} normalizes to nothing", detail)
    return verdict(spec, answers_match(prediction, reference, mode, contains), detail)
