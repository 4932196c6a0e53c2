"""Grader registries (SPEC H.5).

- :data:`GRADERS` — every known grader id → ``grader(spec, prediction, case) -> Score`` on a
  final answer alone: ``answer-match``, ``numeric`` (GSM8K), ``gaia`` (the GAIA question scorer)
  and ``regex`` grade it; the ids that need more are ``skipped`` here
  (:mod:`benchbook.eval.graders.deferred`). Its keys are the set of known grader ids.
- :data:`TRACE_GRADERS` — ``steps``, ``cost``, ``latency``: ``(spec, submission, case)``
  (:mod:`benchbook.eval.graders.trace_limits`), and ``localization`` (the trace, the answer and
  the workspace at the base commit; :mod:`benchbook.eval.graders.localization`).
- :data:`WORKSPACE_GRADERS` — ``command``, ``tests-pass``: ``async (spec, submission, case)``
  (:mod:`benchbook.eval.graders.command`).

:func:`benchbook.eval.grading.grade_submission` dispatches over all of them (and the judge).

:func:`grade` never raises for a known grader: an exception inside a grader becomes a score with
``status = error`` (DESIGN: errors are data). An unknown id is a planning error (InvalidInput
listing the known ids), see :func:`check_grader_ids`.
"""

from __future__ import annotations

from collections.abc import Iterable

from benchbook.contracts.dataset import Case, GraderSpec
from benchbook.contracts.score import Score
from benchbook.errors import InvalidInput
from benchbook.eval.graders.answer_match import grade_answer_match
from benchbook.eval.graders.command import WORKSPACE_GRADERS, WorkspaceGrader
from benchbook.eval.graders.deferred import grade_judge, needs
from benchbook.eval.graders.gaia import grade_gaia
from benchbook.eval.graders.localization import grade_localization
from benchbook.eval.graders.numeric import grade_numeric
from benchbook.eval.graders.regex import grade_regex
from benchbook.eval.graders.trace_limits import TRACE_GRADERS, TraceGrader
from benchbook.eval.graders.verdicts import Grader, error

GRADERS: dict[str, Grader] = {
    "answer-match": grade_answer_match,
    "numeric": grade_numeric,
    "gaia": grade_gaia,
    "regex": grade_regex,
    "judge": grade_judge,
    "command": needs("the case workspace"),
    "tests-pass": needs("the case workspace"),
    "swe-bench": needs("the case workspace and the SWE-bench test run"),
    "steps": needs("the trace"),
    "cost": needs("the trace"),
    "latency": needs("the trace"),
    "localization": needs("the trace and the repository diff"),
}


TRACE_GRADERS["localization"] = grade_localization


def check_grader_ids(specs: Iterable[GraderSpec]) -> None:
    """Raise InvalidInput when any spec names an unknown grader, listing the known ids."""
    unknown = sorted({s.id for s in specs if s.id not in GRADERS})
    if unknown:
        known = sorted(GRADERS)
        raise InvalidInput(
            f"unknown grader ids: {', '.join(unknown)} (known: {', '.join(known)})",
            {"unknown": unknown, "known": known},
        )


def grade(spec: GraderSpec, prediction: str, case: Case) -> Score:
    """Score ``prediction`` (the harness's final answer) for ``case`` with the grader ``spec``.

    Raises:
        InvalidInput: ``spec.id`` is not a known grader.
    """
    check_grader_ids([spec])
    try:
        return GRADERS[spec.id](spec, prediction, case)
    except Exception as exc:  # a grader failure is data, never a crash
        return error(spec, f"{type(exc).__name__}: {exc}")


__all__ = [
    "GRADERS",
    "TRACE_GRADERS",
    "WORKSPACE_GRADERS",
    "Grader",
    "TraceGrader",
    "WorkspaceGrader",
    "check_grader_ids",
    "grade",
]
