"""Comparison contracts (SPEC H.7): a baseline scorecard against a candidate scorecard.

Pairs are matched by ``(case_id, sample)``. Each pair gets one **transition**; the pass-rate
delta over the pairs both sides have comes with a paired bootstrap interval and an exact McNemar
p-value; metric, cost, token and latency deltas come from the two scorecards' summaries. When
the dataset content hashes or the grader (plan) hashes differ, when a side's graders gave no
pass/fail, or when no pair is on both sides, the comparison is still computed but flagged
``comparable: false`` with the reasons.
"""

from __future__ import annotations

from typing import Literal, NamedTuple, get_args

from pydantic import BaseModel, Field, NonNegativeInt

from benchbook.contracts.common import STRICT

Transition = Literal[
    "fixed",
    "regressed",
    "still_passing",
    "still_failing",
    "missing_in_candidate",
    "new_in_candidate",
]
"""What happened to one (case, sample) from the baseline to the candidate."""

TRANSITIONS: tuple[Transition, ...] = get_args(Transition)

Outcome = Literal["passed", "failed", "error"]
"""One side's result for a pair: ``error`` (the harness errored) counts as failed (SPEC H.6)."""

FailOn = Literal["regression", "significant-drop"]


class CaseTransition(NamedTuple):
    """One (case, sample) pair: its outcome on each side (None: absent or ``not_run``).

    A named tuple, so JSON carries it as the array ``[case_id, sample, transition, baseline,
    candidate]`` — e.g. ``["gsm8k-7", 0, "fixed", "failed", "passed"]``: a 100k-pair comparison
    validates in ~0.15 s this way, ~1 s as 100k models.
    """

    case_id: str
    sample: int
    transition: Transition
    baseline: Outcome | None
    candidate: Outcome | None


class TransitionCounts(BaseModel):
    """How many pairs had each transition."""

    model_config = STRICT
    fixed: NonNegativeInt = 0
    regressed: NonNegativeInt = 0
    still_passing: NonNegativeInt = 0
    still_failing: NonNegativeInt = 0
    missing_in_candidate: NonNegativeInt = 0
    new_in_candidate: NonNegativeInt = 0


class BootstrapInterval(BaseModel):
    """A paired bootstrap percentile interval of the pass-rate delta (candidate − baseline).

    ``resamples`` resamples of the paired cases drawn with ``numpy.random.default_rng(seed)``;
    the same seed gives the same interval.
    """

    model_config = STRICT
    low: float
    high: float
    level: float = 0.95
    method: str = "paired bootstrap, percentile"
    resamples: NonNegativeInt
    seed: int


class McNemarTest(BaseModel):
    """McNemar's exact test: a two-sided binomial test (p = ½) on the discordant pairs
    ``fixed`` (baseline failed, candidate passed) and ``regressed`` (the reverse)."""

    model_config = STRICT
    fixed: NonNegativeInt
    regressed: NonNegativeInt
    p_value: float
    method: str = "mcnemar exact (two-sided binomial test on the discordant pairs)"


class Delta(BaseModel):
    """A quantity on both sides and ``delta`` = candidate − baseline (None when either is)."""

    model_config = STRICT
    baseline: float | None
    candidate: float | None
    delta: float | None


class Comparison(BaseModel):
    """Baseline vs candidate scorecard (SPEC H.7).

    Attributes:
        baseline, candidate: the scorecard ids; ``*_run`` their runs, ``*_dataset`` and
            ``*_harness`` their ``id@version``.
        comparable: False when the dataset content hashes or the plan (grader) hashes differ,
            when a side's graders gave no pass/fail (only measurements), or when no pair is on
            both sides; ``reasons`` says which, e.g. ``"grader hash differs"``.
        counts: pairs per transition; ``cases`` every pair (a :class:`CaseTransition` array)
            in baseline order, then the pairs new in the candidate in candidate order.
        paired: pairs present (and not ``not_run``) on both sides; the pass rates, their delta,
            its interval and the McNemar test use these pairs only. The pass rates, delta and
            interval are None when ``paired`` is 0 or a side has no pass/fail.
        significant: McNemar ``p_value`` < ``alpha`` (False without pass rates).
        metrics: per metric both scorecards have, the two means and their delta.
        errors: errored pairs on each side; ``duplicates``: ``case_id#sample`` keys that came
            twice from one side (never from the store, whose key forbids it).
    """

    model_config = STRICT
    baseline: str
    candidate: str
    baseline_run: str
    candidate_run: str
    baseline_dataset: str
    candidate_dataset: str
    baseline_harness: str
    candidate_harness: str
    comparable: bool
    reasons: list[str] = Field(default_factory=list)
    counts: TransitionCounts
    paired: NonNegativeInt
    baseline_pass_rate: float | None
    candidate_pass_rate: float | None
    pass_rate_delta: float | None
    delta_interval: BootstrapInterval | None
    mcnemar: McNemarTest
    alpha: float = 0.05
    significant: bool
    metrics: dict[str, Delta] = Field(default_factory=dict)
    cost_usd: Delta
    tokens_input: Delta
    tokens_output: Delta
    latency_p50_ms: Delta
    latency_p95_ms: Delta
    errors: Delta
    duplicates: list[str] = Field(default_factory=list)
    cases: list[CaseTransition] = Field(default_factory=list)
    baseline_origin: str = "native"
    candidate_origin: str = "native"
    notes: list[str] = Field(default_factory=list)
    """Facts a reader must not miss, e.g. ``"the baseline was reported by alice (origin
    reported), not executed by this server"``."""


class GateResult(BaseModel):
    """The CI gate's verdict on a comparison (``benchbook compare --fail-on``).

    ``exit_code``: 0 passed, 1 the gate failed, 2 not comparable; ``failures`` says why, one
    line each (regressed ids listed).
    """

    model_config = STRICT
    fail_on: FailOn
    allow_errors: bool
    exit_code: Literal[0, 1, 2]
    passed: bool
    failures: list[str] = Field(default_factory=list)
