"""What a grader is given besides the spec and the case: a :class:`Submission` and :class:`Grading`.

A leaf of :mod:`benchbook.eval`: the graders (:mod:`benchbook.eval.graders`), the judge
(:mod:`benchbook.eval.judges`, :mod:`benchbook.eval.judge_prompt`) and the dispatcher
(:mod:`benchbook.eval.grading`, which re-exports these names) all import it, and it imports none
of them — so grading depends on the graders and never the other way round.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from pydantic import JsonValue

from benchbook.contracts.run import Trace
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
