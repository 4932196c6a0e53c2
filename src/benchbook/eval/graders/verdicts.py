"""The grader signature and the three ways a grader answers: a verdict, an error, a skip.

A grader is ``grader(spec, prediction, case) -> Score``: ``spec`` is the case's or run's
:class:`GraderSpec`, ``prediction`` the harness's final answer (text), ``case`` the full case with
its gold. Graders never raise for bad predictions; bad gold or config is ``status = error``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TypeAlias

from pydantic import JsonValue

from benchbook.contracts.dataset import Case, GraderSpec
from benchbook.contracts.score import Score

Grader: TypeAlias = Callable[[GraderSpec, str, Case], Score]
"""``(spec, prediction, case) -> Score``."""


def verdict(spec: GraderSpec, passed: bool, detail: dict[str, JsonValue]) -> Score:
    """A pass/fail score: value ``1.0`` when ``passed`` else ``0.0``; metric = the grader id."""
    return Score(
        grader=spec.id, metric=spec.id, value=1.0 if passed else 0.0, passed=passed, detail=detail
    )


def error(spec: GraderSpec, message: str, detail: dict[str, JsonValue] | None = None) -> Score:
    """A score that could not be computed (bad gold or config): value ``0.0``, no verdict."""
    return Score(
        grader=spec.id,
        metric=spec.id,
        value=0.0,
        passed=None,
        status="error",
        detail={"error": message, **(detail or {})},
    )


def skipped(spec: GraderSpec, reason: str, detail: dict[str, JsonValue] | None = None) -> Score:
    """A score this call cannot produce (no model endpoint, no workspace): no verdict."""
    return Score(
        grader=spec.id,
        metric=spec.id,
        value=0.0,
        passed=None,
        status="skipped",
        detail={"reason": reason, **(detail or {})},
    )


def expected_text(spec: GraderSpec, case: Case) -> str | None:
    """The reference answer as text: ``spec.config["expected"]`` when it is text, else the text
    form of ``case.expected`` (:func:`json_text`); None when there is none."""
    override = spec.config.get("expected")
    return override if isinstance(override, str) else json_text(case.expected)


def json_text(value: JsonValue) -> str | None:
    """The text form text graders compare: a string as is, ``null`` → None, every other JSON
    value as compact JSON with sorted keys (``4`` → ``"4"``, ``true`` → ``"true"``, ``[1,"a"]``;
    integers of any size keep their digits)."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
