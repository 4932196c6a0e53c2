"""MATH / Minerva final-answer extraction and normalization (``numeric`` mode ``math``).

Sources:

- Hendrycks et al., *Measuring Mathematical Problem Solving With the MATH Dataset*, 2021
  (https://arxiv.org/abs/2103.03874): the answer is the content of the **last** ``\\boxed{…}``
  (or ``\\fbox{…}``, or ``\\boxed `` followed by text up to ``$``), braces counted so nested
  groups (``\\boxed{\\frac{1}{2}}``) stay whole.
- Lewkowycz et al., *Solving Quantitative Reasoning Problems with Language Models* (Minerva),
  2022, appendix D, ``normalize_final_answer``, as shipped by lm-evaluation-harness in
  ``lm_eval/tasks/minerva_math/utils.py`` (0.4.x): keep the text after the last ``=``; drop unit
  words; the substitutions (``\\$`` removed, ``\\ `` and spaces removed, ``mbox`` → ``text`` …);
  the removed expressions (``,\\!``, ``{,}``, ``\\;``, ``^\\circ``, ``\\text{}`` …); keep the
  content of ``$…$``, ``\\text{…}``, ``\\textbf{…}``, ``\\overline{…}``, ``\\boxed{…}``;
  ``\\fracab`` → ``\\frac{a}{b}``, ``\\sqrta`` → ``\\sqrt{a}``; ``$`` removed; commas removed
  only when they are thousands separators (``-?\\d{1,3}(,\\d{3})+``).
  :func:`normalize_final_answer` implements exactly that and is tested against the installed
  lm-eval function on the same inputs.

Equivalence (:func:`math_equivalent`): the two normalized strings are equal, or **both** are
numbers and equal as exact rationals. A number is an optional sign and an integer or decimal, or
``\\frac{a}{b}`` / ``\\dfrac{a}{b}`` / ``\\tfrac{a}{b}`` of two such (``\\frac`` stays as
written in the normalized text; only the comparison reads it as a rational). Inside a number
``\\!`` and the thin space ``\\,`` between digit groups are dropped (``1\\,000``), a Benchbook
extension: Minerva drops only ``,\\!``. lm-eval's ``is_equiv`` also tries sympy's LaTeX parser
on symbolic answers (``\\sqrt{2}/2`` = ``\\frac{\\sqrt{2}}{2}``); Benchbook does not — such
answers match only when their normalized text is identical.
"""

from __future__ import annotations

import re
from fractions import Fraction

from benchbook.eval.graders.linear_rules import (
    brace_sqrt_index,
    keep_between_dollars,
    search_lazy_sentence,
    unwrap_boxed_greedy,
    unwrap_lazy,
)

# Minerva appendix D, in lm-eval 0.4.x's order.
SUBSTITUTIONS: tuple[tuple[str, str], ...] = (
    ("an ", ""),
    ("a ", ""),
    (".$", "$"),
    ("\\$", ""),
    ("\\ ", ""),
    (" ", ""),
    ("mbox", "text"),
    (",\\text{and}", ","),
    ("\\text{and}", ","),
    ("\\text{m}", "\\text{}"),
)
REMOVED_EXPRESSIONS: tuple[str, ...] = (
    *["square", "ways", "integers", "dollars", "mph", "inches", "ft", "hours", "km", "units"],
    "\\ldots",
    *[
        "sue",
        "points",
        "feet",
        "minutes",
        "digits",
        "cents",
        "degrees",
        "cm",
        "gm",
        "pounds",
        "meters",
        "meals",
        "edges",
    ],
    *["students", "childrentickets", "multiples"],
    "\\text{s}",
    "\\text{.}",
    "\\text{\ns}",
    "\\text{}^2",
    "\\text{}^3",
    "\\text{\n}",
    "\\text{}",
    "\\mathrm{th}",
    "^\\circ",
    "^{\\circ}",
    "\\;",
    ",\\!",
    "{,}",
    '"',
    "\\dots",
)
_COMMAND = re.compile(r"(\\[a-zA-Z]+)")
# Minerva's r"Final Answer: The final answer is(.*?). I hope it is correct.", run in linear time.
_FINAL_PREFIX = "Final Answer: The final answer is"
_FINAL_SUFFIX = " I hope it is correct"
_END = "I hope it is correct."


def last_boxed(text: str) -> str | None:
    """The content of the last ``\\boxed{…}`` / ``\\fbox{…}`` (nested braces kept), or of
    ``\\boxed `` up to the next ``$``; None when there is none or its braces never close."""
    if "\\boxed " in text:
        return text.split("\\boxed ")[-1].split("$")[0]
    start = text.rfind("\\boxed")
    if start < 0:
        start = text.rfind("\\fbox")
    if start < 0:
        return None
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                whole = text[start : i + 1]
                # lm-eval's remove_boxed strips "\boxed{" and "}"; an \fbox keeps its prefix.
                return whole[len("\\boxed{") : -1] if whole.startswith("\\boxed{") else whole
    return None


def final_answer_text(text: str) -> str:
    """Where a free-form answer states its result: the last ``\\boxed{…}`` (Hendrycks MATH),
    else Minerva's ``Final Answer: The final answer is X. I hope it is correct.`` sentence,
    else the whole text stripped."""
    boxed = last_boxed(text)
    if boxed is not None:
        return boxed
    stated = search_lazy_sentence(text + _END, _FINAL_PREFIX, _FINAL_SUFFIX)
    return stated.strip() if stated is not None else text.strip()


def _drop_units(text: str) -> str:
    for expr in REMOVED_EXPRESSIONS:
        if expr.isalpha():
            text = re.sub(rf"(?<!\\)\b{expr}\b", "", text)
    for before, after in SUBSTITUTIONS:
        text = text.replace(before, after)
    for expr in REMOVED_EXPRESSIONS:
        if expr.isalpha():
            # Units glued to their neighbours once spaces are gone; never inside a command.
            parts = _COMMAND.split(text)
            parts[::2] = [p.replace(expr, "") for p in parts[::2]]
            text = "".join(parts)
        else:
            text = text.replace(expr, "")
    return text


def normalize_final_answer(answer: str) -> str:
    """Minerva's ``normalize_final_answer`` (module docstring), as lm-eval 0.4.x ships it."""
    text = _drop_units(answer.split("=")[-1])
    # lm-eval's regexes, in its order; the quadratic ones by their linear equivalents:
    # r"(.*?)(\$)(.*?)(\$)(.*)" → "$\\3$", rf"(\\{command}\{{)(.*?)(\}})" → "\\2",
    # r"(\\boxed\{)(.*)(\})" → "\\2", r"(sqrt)(\[[^\]]*\])(\w)" → "\\1\\2{\\3}".
    text = keep_between_dollars(text)
    for command in ("text", "textbf", "overline"):
        text = unwrap_lazy(text, command)
    text = unwrap_boxed_greedy(text)
    text = re.sub(r"(frac)([^{])(.)", "frac{\\2}{\\3}", text)
    text = brace_sqrt_index(text)
    text = re.sub(r"(sqrt)(?!\[)([^{])", "sqrt{\\2}", text)
    text = text.replace("$", "")
    if re.fullmatch(r"-?\d{1,3}(,\d{3})+", text):
        text = text.replace(",", "")
    return text


_DECIMAL = r"(?:\d+(?:\.\d*)?|\.\d+)"
_PLAIN = re.compile(rf"([+-]?){_DECIMAL}")
_FRACTION = re.compile(rf"([+-]?)\\[dt]?frac\{{({_DECIMAL})\}}\{{({_DECIMAL})\}}")


def as_number(normalized: str) -> Fraction | None:
    """A normalized answer read as an exact rational (module docstring), or None."""
    text = normalized.replace("\\!", "")
    text = re.sub(r"(?<=\d)(?:\\,|\{,\}|,)(?=\d{3}(?!\d))", "", text)
    if _PLAIN.fullmatch(text):
        return Fraction(text)
    match = _FRACTION.fullmatch(text)
    if match is None:
        return None
    sign, numerator, denominator = match.groups()
    if Fraction(denominator) == 0:
        return None
    value = Fraction(numerator) / Fraction(denominator)
    return -value if sign == "-" else value


def math_equivalent(prediction: str, reference: str) -> bool:
    """Whether two **normalized** answers match: same text, or both numbers of equal value."""
    if prediction == reference:
        return True
    left, right = as_number(prediction), as_number(reference)
    return left is not None and right is not None and left == right
