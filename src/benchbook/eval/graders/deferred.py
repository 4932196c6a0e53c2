"""Answer-only stand-ins for the graders that need more than a final answer.

:func:`benchbook.eval.graders.grade` sees only ``(spec, prediction, case)``. For the graders
that need the trace (``steps``, ``cost``, ``latency``), the case workspace (``command``,
``tests-pass``) or a model endpoint (``judge``) it returns ``status = skipped`` naming what is
missing — never a verdict. :func:`benchbook.eval.grading.grade_submission` grades them for real
from a :class:`~benchbook.eval.grading.Submission` (``localization`` too, given the
workspace); ``swe-bench`` (SPEC I) is still skipped there. The ``judge`` stand-in checks its
rubric: a malformed rubric is ``status = error``.
"""

from __future__ import annotations

from benchbook.contracts.dataset import Case, GraderSpec
from benchbook.contracts.score import Score
from benchbook.errors import InvalidInput
from benchbook.eval.graders.judge_config import parse_judge_config
from benchbook.eval.graders.verdicts import Grader, error, skipped


def needs(what: str) -> Grader:
    """A grader that is skipped because grading needs ``what`` (for example "the trace")."""

    def grade(spec: GraderSpec, prediction: str, case: Case) -> Score:
        return skipped(spec, f"grader {spec.id!r} needs {what}, which this call does not have")

    return grade


def grade_judge(spec: GraderSpec, prediction: str, case: Case) -> Score:
    """Validate the judge rubric; skipped (no model call yet) with the rubric's shape in detail.

    Returns ``status = error`` when the rubric is missing or malformed.
    """
    try:
        judge = parse_judge_config(spec.config)
    except InvalidInput as exc:
        return error(spec, exc.message)
    return skipped(
        spec,
        "judge execution needs a model endpoint; the rubric is recorded as data",
        {
            "rubric_kind": judge.rubric.kind,
            "refusal": judge.rubric.refusal,
            "criteria": [c.id for c in judge.rubric.criteria],
            "scoring": judge.scoring.kind if judge.scoring else None,
        },
    )
