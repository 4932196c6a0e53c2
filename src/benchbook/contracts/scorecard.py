"""Scorecard and pricing contracts (SPEC H.6, H.8).

A scorecard is the graded view of a run's traces under one plan. A run gets one when it
finishes; a rescore adds another under a different plan, linked to the same traces.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated

from pydantic import BaseModel, Field, JsonValue, NonNegativeInt

from benchbook.contracts.common import STRICT, NonEmptyStr
from benchbook.contracts.run import Interval, RunPlan

__all__ = [
    "Interval",
    "LatencySummary",
    "MetricSummary",
    "ModelPrice",
    "PricingTable",
    "Scorecard",
]


class MetricSummary(BaseModel):
    """Mean/min/max of one metric over the scored (case, sample) pairs (status ``ok`` only);
    ``errors`` counts scores with status ``error``, ``skipped`` those skipped."""

    model_config = STRICT
    n: NonNegativeInt
    mean: float | None = None
    min: float | None = None
    max: float | None = None
    passed: NonNegativeInt = 0
    errors: NonNegativeInt = 0
    skipped: NonNegativeInt = 0


class LatencySummary(BaseModel):
    """Harness wall time over finished (case, sample) pairs, in milliseconds (nearest-rank
    percentiles)."""

    model_config = STRICT
    p50_ms: float | None = None
    p95_ms: float | None = None
    max_ms: float | None = None


class Scorecard(BaseModel):
    """A run's scores under one plan (SPEC H.6).

    Attributes:
        n: (case, sample) pairs counted in the pass rate (ok + error; ``not_run`` excluded).
        passed: pairs that passed; ``pass_rate`` = passed / n with its Wilson 95% interval;
            None when n = 0, or when no grader gave a pass/fail (a plan that only measures,
            such as ``localization``; pass@k and pass^k are then empty too).
        errors: pairs whose harness errored (counted as failed); ``not_run``: never started.
        grader_errors: pairs whose harness finished but whose grading could not decide (a
            grader's error, an unparseable or incomplete judge reply): never passed, counted
            as failed in ``n`` and apart from ``errors`` (SPEC H.6, fail closed).
        limits: ``agent`` pairs that ended at a limit without an answer, by limit
            (``{steps: 3, time: 1}``) — finished, graded (an empty answer), not errors.
        pass_at_k: ``{k: value}`` — Chen et al. 2021 unbiased estimator averaged over cases,
            for k = 1..repeats; ``pass_hat_k`` — pass^k (all k samples pass), same k.
        metrics: per-metric summaries keyed by metric name.
        tokens_input, tokens_output: the harness's summed usage; ``cost_usd`` its summed
            priced cost (an exact decimal sum, rounded once to a float).
        judge_tokens_input, judge_tokens_output, judge_cost_usd: the same for the judge
            calls made while grading (cached verdicts cost nothing), kept apart.
        pricing_sha256: sha256 of the pricing table the costs came from.
        localization: with a ``localization`` grader, the aggregates of its per-case metrics
            (``benchbook.eval.localization.aggregate``, LOCALIZATION §4): ``{instances,
            errored, micro, macro, macro_all, auc_coverage, redundancy, editloc}``. Errored
            scores are excluded from ``micro``/``macro`` (upstream's policy) and count as 0 in
            ``macro_all``; skipped scores (no checkout) are in neither and counted in
            ``metrics["localization"].skipped``. None without such a grader.
    """

    model_config = STRICT
    id: str
    run_id: str
    plan: RunPlan
    plan_hash: str
    dataset: str
    dataset_content_hash: str
    harness: str
    rescore_of: str | None = None
    tags: list[str] = Field(default_factory=list)
    cases: NonNegativeInt = 0
    repeats: NonNegativeInt = 1
    n: NonNegativeInt = 0
    passed: NonNegativeInt = 0
    errors: NonNegativeInt = 0
    grader_errors: NonNegativeInt = 0
    not_run: NonNegativeInt = 0
    limits: dict[str, NonNegativeInt] = Field(default_factory=dict)
    pass_rate: float | None = None
    pass_interval: Interval | None = None
    pass_at_k: dict[str, float] = Field(default_factory=dict)
    pass_hat_k: dict[str, float] = Field(default_factory=dict)
    metrics: dict[str, MetricSummary] = Field(default_factory=dict)
    tokens_input: NonNegativeInt = 0
    tokens_output: NonNegativeInt = 0
    cost_usd: float = 0.0
    judge_tokens_input: NonNegativeInt = 0
    judge_tokens_output: NonNegativeInt = 0
    judge_cost_usd: float = 0.0
    latency: LatencySummary = Field(default_factory=LatencySummary)
    pricing_sha256: str | None = None
    localization: dict[str, JsonValue] | None = None
    created_by: str | None = None
    created_at: datetime


class ModelPrice(BaseModel):
    """USD per million input and output tokens."""

    model_config = STRICT
    input_per_mtok_usd: Annotated[float, Field(ge=0)]
    output_per_mtok_usd: Annotated[float, Field(ge=0)]


class PricingTable(BaseModel):
    """A dated price list ``{as_of, source?, models: {model: ModelPrice}}`` shipped as data;
    its sha256 is recorded with every scorecard that used it."""

    model_config = STRICT
    as_of: date
    source: str | None = None
    models: dict[NonEmptyStr, ModelPrice]
