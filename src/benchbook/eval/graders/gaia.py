"""The GAIA question scorer (grader id ``gaia``).

Sources: Mialon et al., *GAIA: a benchmark for General AI Assistants*, 2023
(https://arxiv.org/abs/2311.12983), and the official scorer, ``scorer.py`` in the Hugging Face
space https://huggingface.co/spaces/gaia-benchmark/leaderboard (``question_scorer``,
``normalize_number_str``, ``split_string``, ``normalize_str``). The rules below are ported
faithfully, quirks included, so a Benchbook score equals a leaderboard score:

- **Number** — the reference parses with Python ``float()`` (so ``" 12 "``, ``"1e3"`` and
  ``"1_000"`` count): the answer has every ``$``, ``%`` and ``,`` removed and is compared with
  ``float()`` equality; an answer that does not parse is ``inf`` (never equal). Units other than
  ``$``/``%`` are not removed (``"17 km"`` fails).
- **List** — otherwise, a reference containing ``,`` or ``;`` is split on both; the answer too.
  Different lengths fail. Each pair is compared as a number when the reference element is one
  (as above), else as a string with whitespace removed and lowercased, **punctuation kept**. A
  reference such as ``"1,000"`` is therefore a two-element list (``"1"``, ``"000"``), upstream's
  behaviour.
- **String** — otherwise: whitespace removed, lowercased, ASCII punctuation
  (``string.punctuation``) removed, then compared for equality.

The answer scored is the text after the last ``FINAL ANSWER:`` when the prediction has one (the
answer template of the paper's system prompt), else the whole prediction; set
``config.extract = "none"`` to score the prediction exactly as given.
"""

from __future__ import annotations

import re
import string

from pydantic import JsonValue

from benchbook.contracts.dataset import Case, GraderSpec
from benchbook.contracts.score import Score
from benchbook.eval.graders.verdicts import error, expected_text, verdict

_FINAL_ANSWER = re.compile(r"FINAL ANSWER\s*:", re.IGNORECASE)
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_number_str(number_str: str) -> float:
    """``number_str`` without ``$``, ``%`` and ``,`` as a float; ``inf`` when it does not parse."""
    for char in ("$", "%", ","):
        number_str = number_str.replace(char, "")
    try:
        return float(number_str)
    except ValueError:
        return float("inf")


def split_string(s: str, char_list: tuple[str, ...] = (",", ";")) -> list[str]:
    """``s`` split on every character of ``char_list`` (elements keep their whitespace)."""
    return re.split(f"[{''.join(char_list)}]", s)


def normalize_str(input_str: str, remove_punct: bool = True) -> str:
    """``input_str`` with all whitespace removed, lowercased, punctuation optionally removed."""
    no_spaces = re.sub(r"\s", "", input_str)
    if remove_punct:
        return no_spaces.lower().translate(_PUNCTUATION)
    return no_spaces.lower()


def is_float(element: str) -> bool:
    """Whether Python's ``float()`` accepts ``element``."""
    try:
        float(element)
    except ValueError:
        return False
    return True


def answer_kind(ground_truth: str) -> str:
    """How a reference is compared: ``number``, ``list`` or ``string`` (upstream's order)."""
    if is_float(ground_truth):
        return "number"
    if any(char in ground_truth for char in (",", ";")):
        return "list"
    return "string"


def _elements_match(ma_elem: str, gt_elem: str) -> bool:
    if is_float(gt_elem):
        return normalize_number_str(ma_elem) == float(gt_elem)
    # Upstream keeps punctuation inside list elements: they may hold meaningful punctuation.
    return normalize_str(ma_elem, remove_punct=False) == normalize_str(gt_elem, remove_punct=False)


def question_scorer(model_answer: str, ground_truth: str) -> bool:
    """Whether ``model_answer`` matches ``ground_truth`` under GAIA's rules (module docstring)."""
    kind = answer_kind(ground_truth)
    if kind == "number":
        return normalize_number_str(model_answer) == float(ground_truth)
    if kind == "list":
        gt_elems = split_string(ground_truth)
        ma_elems = split_string(model_answer)
        if len(gt_elems) != len(ma_elems):
            return False
        return all(_elements_match(ma, gt) for ma, gt in zip(ma_elems, gt_elems, strict=True))
    return normalize_str(model_answer) == normalize_str(ground_truth)


def final_answer(prediction: str) -> str:
    """The text after the last ``FINAL ANSWER:`` (stripped), else the whole prediction."""
    markers = list(_FINAL_ANSWER.finditer(prediction))
    return prediction[markers[-1].end() :].strip() if markers else prediction


def grade_gaia(spec: GraderSpec, prediction: str, case: Case) -> Score:
    """Grade ``prediction`` with :func:`question_scorer` against the case's ``Final answer``.

    Returns a pass/fail :class:`Score` with ``detail = {model_answer, ground_truth, kind}``;
    ``status = error`` when the case has no expected answer or ``config.extract`` is not
    ``"final-answer"`` or ``"none"``.
    """
    extract = spec.config.get("extract", "final-answer")
    if extract not in ("final-answer", "none"):
        return error(spec, "config.extract must be 'final-answer' or 'none'")
    ground_truth = expected_text(spec, case)
    if ground_truth is None:
        return error(spec, "the case has no expected answer")
    model_answer = final_answer(prediction) if extract == "final-answer" else prediction
    detail: dict[str, JsonValue] = {
        "model_answer": model_answer,
        "ground_truth": ground_truth,
        "kind": answer_kind(ground_truth),
    }
    return verdict(spec, question_scorer(model_answer, ground_truth), detail)
