"""Regular-expression grader (grader id ``regex``): the prediction must match a pattern.

``config``: ``pattern`` (Python ``re`` syntax, required); ``fullmatch`` (bool, default false:
the pattern may match anywhere); ``ignore_case`` (bool); ``multiline`` and ``dotall`` (bool,
``re.MULTILINE``/``re.DOTALL``). When the pattern has groups the first group's text is recorded
in ``detail.match``.

The pattern is someone's input: it is matched with a time bound and without holding the GIL
(:mod:`benchbook.user_patterns`). A match that runs out of time is a grader error on that
(case, sample) naming the cause — never a pass, never a frozen server.
"""

from __future__ import annotations

import re

from pydantic import JsonValue

from benchbook.contracts.dataset import Case, GraderSpec
from benchbook.contracts.score import Score
from benchbook.eval.graders.verdicts import error, verdict
from benchbook.user_patterns import PatternTimeout, UserPattern

_FLAGS = {"ignore_case": re.IGNORECASE, "multiline": re.MULTILINE, "dotall": re.DOTALL}


def compile_pattern(spec: GraderSpec) -> UserPattern:
    """The compiled ``config.pattern`` with the configured flags.

    Raises:
        ValueError: the pattern is missing, not text, or not a regular expression.
    """
    pattern = spec.config.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        raise ValueError("config.pattern: must be a non-empty regular expression")
    flags = 0
    for key, flag in _FLAGS.items():
        if spec.config.get(key) is True:
            flags |= flag
    try:
        return UserPattern(pattern, flags)
    except re.error as exc:
        raise ValueError(f"config.pattern: not a regular expression: {exc}") from exc


def config_problem(spec: GraderSpec) -> tuple[str, str] | None:
    """``("pattern", message)`` when ``config.pattern`` is missing or does not compile."""
    try:
        compile_pattern(spec)
    except ValueError as exc:
        return "pattern", str(exc).removeprefix("config.pattern: ")
    return None


def grade_regex(spec: GraderSpec, prediction: str, case: Case) -> Score:
    """Pass when ``config.pattern`` matches ``prediction`` (anywhere, or fully with
    ``fullmatch``). Returns ``status = error`` for a missing or invalid pattern, or one that
    takes longer than its time bound on this answer."""
    try:
        compiled = compile_pattern(spec)
    except ValueError as exc:
        return error(spec, str(exc))
    fullmatch = spec.config.get("fullmatch") is True
    detail: dict[str, JsonValue] = {"pattern": compiled.pattern, "fullmatch": fullmatch}
    try:
        match = compiled.fullmatch(prediction) if fullmatch else compiled.search(prediction)
    except PatternTimeout as exc:
        return error(spec, f"regex grader: {exc} on this answer", detail)
    if match is not None:
        detail["match"] = match.group(1) if compiled.groups else match.group(0)
    return verdict(spec, match is not None, detail)
