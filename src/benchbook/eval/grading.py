"""Grading one (case, sample) after its harness finished: where ground truth meets a prediction.

:func:`grade_submission` applies a plan's grader specs to a :class:`Submission` (the harness's
answer, trace and — while it still exists — the case workspace) and the full :class:`Case` with
its gold. It never raises for a known grader: failures become scores with ``status = error``
(DESIGN: errors are data). Grader families (SPEC H.5):

- answer graders ``(spec, answer, case) -> Score``: ``answer-match``, ``numeric``, ``gaia``,
  ``regex`` (:data:`benchbook.eval.graders.GRADERS`);
- trace graders ``(spec, submission, case) -> Score``: ``steps``, ``cost``, ``latency``;
- workspace graders ``async (spec, submission, case) -> Score``: ``command``, ``tests-pass``;
- the judge ``async (spec, submission, case, grading) -> list[Score]``: one score per criterion
  plus ``judge:<judge_id>:milestone:<m>`` per milestone (:mod:`benchbook.eval.judges`).

:class:`Submission`, :class:`Grading` and :class:`VerdictCache` live in the leaf
:mod:`benchbook.eval.submission` (re-exported here): the graders and the judge import them from
there, so this module depends on them and none of them on it (one direction, issue 32).
"""

from __future__ import annotations

from benchbook.contracts.dataset import Case, GraderSpec
from benchbook.contracts.score import Score
from benchbook.eval import graders, judges
from benchbook.eval.graders.verdicts import error
from benchbook.eval.submission import Grading, Submission, VerdictCache


def grader_error_of(scores: list[Score]) -> str | None:
    """What makes a finished (case, sample) a *grader error* (SPEC H.6, fail closed):
    ``"<metric>: <message>"`` of the first score with status ``error`` (a grader's own failure,
    an unparseable or incomplete judge reply, a missing criterion or milestone), cut at 500
    characters; None when every grader decided or was skipped."""
    for score in scores:
        if score.status == "error":
            message = score.detail.get("error")
            text = f"{score.metric}: {message if isinstance(message, str) else 'error'}"
            return text[:500]
    return None


def decide_passed(status: str, scores: list[Score]) -> bool | None:
    """A (case, sample) passes when its harness finished, no grader failed to decide, and
    every score that gives a verdict passed (at least one must). An errored harness or a grader
    error fails; no verdict at all (only measurements or skips) → None."""
    if status != "ok" or grader_error_of(scores) is not None:
        return False
    verdicts = [s.passed for s in scores if s.passed is not None]
    if not verdicts:
        return None
    return all(verdicts)


async def grade_submission(
    specs: list[GraderSpec], submission: Submission, case: Case, grading: Grading
) -> list[Score]:
    """Apply ``specs`` to one (case, sample) after its harness finished.

    Graders run one after another in plan order (a workspace command may change the workspace
    the next one sees). Metric names are the grader ids, except the judge's
    (``judge:<judge_id>:…``).

    Args:
        specs: the effective graders (:func:`benchbook.eval.plans.effective_graders`).
        submission: the harness's answer, trace and — while it exists — workspace.
        case: the full case, gold included.
        grading: secrets and the verdict cache for judges.

    Returns:
        The scores in spec order (a judge contributes several); ``[]`` when
        ``submission.status`` is not ``ok`` — an errored harness is failed without grading.
        Never raises for a grader's failure: an exception inside a grader, or an unknown
        grader id, becomes one score with ``status = error`` for that spec.
    """
    if submission.status != "ok":
        return []
    scores: list[Score] = []
    for spec in specs:
        scores.extend(await _grade_one(spec, submission, case, grading))
    return scores


async def _grade_one(
    spec: GraderSpec, submission: Submission, case: Case, grading: Grading
) -> list[Score]:
    """One spec's scores; any exception becomes an error score."""
    try:
        if spec.id == "judge":
            return list(await judges.run_judge(spec, submission, case, grading))
        if spec.id in graders.TRACE_GRADERS:
            return [graders.TRACE_GRADERS[spec.id](spec, submission, case)]
        if spec.id in graders.WORKSPACE_GRADERS:
            return [await graders.WORKSPACE_GRADERS[spec.id](spec, submission, case)]
        if spec.id not in graders.GRADERS:
            return [error(spec, f"unknown grader id {spec.id!r}")]
        return [graders.GRADERS[spec.id](spec, submission.answer, case)]
    except Exception as exc:  # a grader failure is data, never a crash (DESIGN)
        return [error(spec, f"{type(exc).__name__}: {exc}")]


__all__ = [
    "Grading",
    "Submission",
    "VerdictCache",
    "decide_passed",
    "grade_submission",
    "grader_error_of",
]
