"""Trace graders (SPEC H.5): limits on what a harness spent — ``steps``, ``cost``, ``latency``.

A trace grader is ``grader(spec, submission, case) -> Score``; it reads only
``submission.trace``. Each passes when the measured quantity is at most the configured cap, and
records the measurement as the score's ``value`` (metric = the grader id):

- ``steps`` — ``config.max`` (int ≥ 0): value = ``len(trace.tool_calls)``.
- ``cost`` — ``config.max_usd`` (number ≥ 0): value = ``trace.cost_usd`` in USD; an unpriced
  trace (``cost_usd`` None) is ``skipped``.
- ``latency`` — ``config.max_ms`` or ``config.max_s`` (number ≥ 0; not both): value =
  ``trace.duration_ms`` in milliseconds.

A missing or malformed cap is ``status = error`` naming the config key.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias

from pydantic import JsonValue

from benchbook.contracts.dataset import Case, GraderSpec
from benchbook.contracts.score import Score
from benchbook.eval.graders.verdicts import error, skipped
from benchbook.eval.submission import Submission

TraceGrader: TypeAlias = Callable[[GraderSpec, "Submission", Case], Score]
"""``(spec, submission, case) -> Score``."""


def _cap(spec: GraderSpec, key: str) -> float | None:
    """``config[key]`` as a non-negative number, None when absent.

    Raises:
        ValueError: present but not a non-negative number (booleans are not numbers here).
    """
    value = spec.config.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ValueError(f"config.{key} must be a non-negative number, got {value!r}")
    return float(value)


def _limit(spec: GraderSpec, value: float, cap: float, detail: dict[str, JsonValue]) -> Score:
    """Pass when ``value`` ≤ ``cap``; the score's value is the measurement itself."""
    passed = value <= cap
    return Score(
        grader=spec.id,
        metric=spec.id,
        value=value,
        passed=passed,
        detail={**detail, "value": value, "cap": cap},
    )


def grade_steps(spec: GraderSpec, submission: Submission, case: Case) -> Score:
    """Pass when the trace's tool calls number at most ``config.max``."""
    try:
        cap = _cap(spec, "max")
    except ValueError as exc:
        return error(spec, str(exc))
    if cap is None:
        return error(spec, "config.max (the most tool calls allowed) is required")
    steps = len(submission.trace.tool_calls)
    return _limit(spec, float(steps), cap, {"unit": "tool calls"})


def grade_cost(spec: GraderSpec, submission: Submission, case: Case) -> Score:
    """Pass when the trace's priced cost is at most ``config.max_usd``; unpriced → skipped."""
    try:
        cap = _cap(spec, "max_usd")
    except ValueError as exc:
        return error(spec, str(exc))
    if cap is None:
        return error(spec, "config.max_usd (the cost cap in USD) is required")
    cost_usd = submission.trace.cost_usd
    if cost_usd is None:
        return skipped(
            spec,
            "the trace's cost is unknown (no price for its model)",
            {"model": submission.trace.model},
        )
    return _limit(spec, cost_usd, cap, {"unit": "usd"})


def grade_latency(spec: GraderSpec, submission: Submission, case: Case) -> Score:
    """Pass when the harness's wall time is at most ``config.max_ms`` (or ``max_s`` × 1000)."""
    try:
        cap_ms, cap_s = _cap(spec, "max_ms"), _cap(spec, "max_s")
    except ValueError as exc:
        return error(spec, str(exc))
    if (cap_ms is None) == (cap_s is None):
        return error(spec, "exactly one of config.max_ms and config.max_s is required")
    cap = cap_ms if cap_ms is not None else 1000.0 * (cap_s or 0.0)
    return _limit(spec, float(submission.trace.duration_ms), cap, {"unit": "ms"})


TRACE_GRADERS: dict[str, TraceGrader] = {
    "steps": grade_steps,
    "cost": grade_cost,
    "latency": grade_latency,
}
"""Trace grader id → grader."""
