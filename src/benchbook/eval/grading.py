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
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from pydantic import JsonValue

from benchbook.contracts.dataset import Case, GraderSpec
from benchbook.contracts.run import Trace
from benchbook.contracts.score import Score
from benchbook.contracts.scorecard import PricingTable
from benchbook.runtime.sandbox import SandboxPolicy


@dataclass(frozen=True)
class Submission:
    """What a harness produced for one (case, sample).

    Attributes:
        answer: the final answer (text).
        trace: the full trace (usage, cost, duration, tool calls, environment snapshot).
        status: the runtime's status; graders only run on ``ok`` submissions.
        workdir: the case's working directory, present only while the environment is open
            (None when rescoring a saved run: workspace graders are then ``skipped``).
        mirrors: the local mirror cache (``<mirrors>/<host>/<owner>/<repo>.git``), where
            graders that only read the repository at its base commit find it without the
            workspace (``localization`` when rescoring).
        sandbox: how workspace graders start their command (the run's
            ``RuntimeConfig.sandbox``); None: the default policy (sandbox on).
    """

    answer: str
    trace: Trace
    status: Literal["ok", "error"] = "ok"
    workdir: Path | None = None
    mirrors: Path | None = None
    sandbox: SandboxPolicy | None = None


class VerdictCache(Protocol):
    """Judge verdicts by ``(judge spec hash, input hash)`` (SPEC H.5); the store implements it."""

    def get(self, judge_hash: str, input_hash: str) -> dict[str, JsonValue] | None:
        """The cached verdict JSON, or None."""
        ...

    def put(self, judge_hash: str, input_hash: str, verdict: dict[str, JsonValue]) -> None:
        """Remember a verdict."""
        ...


@dataclass
class Grading:
    """What graders may need beyond the submission and the case.

    Attributes:
        secrets: secret values by name (resolved requester first) — a judge's
            ``api_key_secret`` is looked up here.
        verdicts: the judge verdict cache; None disables caching.
        model_calls: incremented by every model call a judge makes (tests and reports).
        pricing: the price table a judge call's cost comes from (None: unpriced).
    """

    secrets: Mapping[str, str] = field(default_factory=dict)
    verdicts: VerdictCache | None = None
    model_calls: int = 0
    pricing: PricingTable | None = None


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
    # Imported here: the graders and judges import this module for Submission and Grading.
    from benchbook.eval import graders
    from benchbook.eval.graders.verdicts import error
    from benchbook.eval.judges import run_judge

    try:
        if spec.id == "judge":
            return list(await run_judge(spec, submission, case, grading))
        if spec.id in graders.TRACE_GRADERS:
            return [graders.TRACE_GRADERS[spec.id](spec, submission, case)]
        if spec.id in graders.WORKSPACE_GRADERS:
            return [await graders.WORKSPACE_GRADERS[spec.id](spec, submission, case)]
        if spec.id not in graders.GRADERS:
            return [error(spec, f"unknown grader id {spec.id!r}")]
        return [graders.GRADERS[spec.id](spec, submission.answer, case)]
    except Exception as exc:  # a grader failure is data, never a crash (DESIGN)
        return [error(spec, f"{type(exc).__name__}: {exc}")]
