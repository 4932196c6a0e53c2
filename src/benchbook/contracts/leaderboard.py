"""Leaderboard contracts: the finished scorecards of one dataset version, one row per
harness@version, grouped by grader plan (rows graded under different plans are never ranked
together) with the cost–accuracy Pareto frontier of each group marked."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field, NonNegativeInt

from benchbook.contracts.common import STRICT
from benchbook.contracts.run import Interval

LeaderboardSelect = Literal["latest", "best", "all"]
"""Which scorecards make the rows: each harness@version's newest finished one (``latest``),
its highest pass rate (``best``, newest first among equals), or every one (``all``)."""
LEADERBOARD_SELECTS: tuple[LeaderboardSelect, ...] = ("latest", "best", "all")
LeaderboardSort = Literal["pass_rate", "cost", "date", "harness"]
LEADERBOARD_SORTS: tuple[LeaderboardSort, ...] = ("pass_rate", "cost", "date", "harness")


class LeaderboardRow(BaseModel):
    """One scorecard on the board.

    Attributes:
        rank: 1-based position in its group under the board's sort.
        harness: ``id@version``; ``run_id`` and ``scorecard_id`` name the row's source.
        dataset_cases: the cases of the dataset version; ``partial``: the scorecard graded
            fewer (a ``--limit``/``--case-id`` subset, "subset (cases of dataset_cases)").
        cases, repeats, n: the scorecard's counts (n = (case, sample) pairs counted);
            ``passed``, ``errors`` (harness errors), ``grader_errors`` (scores a grader could
            not decide; None when the scorecard does not count them).
        pass_rate, pass_interval: passed / n with its Wilson 95% interval (None: no verdicts).
        pass_at_k: ``{k: value}`` for k = 1..repeats when the run repeated cases (else empty).
        cost_usd, cost_per_case_usd: the scorecard's priced cost, and divided by its cases;
            None when nothing was priced (unknown, not free) or no case: such rows are off the
            cost axis and the frontier.
        tokens_input, tokens_output: summed over the run (totals, not per case).
        latency_p50_ms, latency_p95_ms: harness wall time (nearest rank).
        finished_at: when the run ended (its scorecard's date for a rescore: ``created_at``).
        tags: the scorecard's tags. ``frontier``: on its group's cost–accuracy frontier.
    """

    model_config = STRICT
    rank: int
    harness: str
    harness_id: str
    harness_version: str
    run_id: str
    scorecard_id: str
    rescore_of: str | None = None
    cases: NonNegativeInt
    dataset_cases: NonNegativeInt = 0
    partial: bool = False
    repeats: NonNegativeInt
    n: NonNegativeInt
    passed: NonNegativeInt
    errors: NonNegativeInt
    grader_errors: NonNegativeInt | None = None
    pass_rate: float | None = None
    pass_interval: Interval | None = None
    pass_at_k: dict[str, float] = Field(default_factory=dict)
    cost_usd: float | None = None
    cost_per_case_usd: float | None = None
    tokens_input: NonNegativeInt
    tokens_output: NonNegativeInt
    latency_p50_ms: float | None = None
    latency_p95_ms: float | None = None
    created_at: datetime
    finished_at: datetime | None = None
    tags: list[str] = Field(default_factory=list)
    frontier: bool = False


class LeaderboardGroup(BaseModel):
    """Rows graded under one plan (``plan_hash``); ``graders`` names the plan's grader ids
    (``numeric``, ``judge`` …) for its label; ``frontier`` lists its frontier's scorecard ids
    cheapest first; ``partial``: rows over a subset of the cases (ranked apart from full runs,
    no frontier), one group per subset: ``subset`` names it (``first 200 cases``, ``case ids
    gsm8k-4``, ``tags hard``), so runs over different cases are never ranked together."""

    model_config = STRICT
    plan_hash: str
    graders: list[str]
    rows: list[LeaderboardRow]
    frontier: list[str] = Field(default_factory=list)
    partial: bool = False
    subset: str | None = None


class Leaderboard(BaseModel):
    """The board of one dataset version (``dataset`` = ``id@version``): groups largest first;
    ``partial_hidden``: subset scorecards left off (without ``include_partial``), so an empty
    board can say that subset runs exist."""

    model_config = STRICT
    dataset: str
    select: LeaderboardSelect
    sort: LeaderboardSort
    tag: str | None = None
    plan: str | None = None
    include_partial: bool = False
    dataset_cases: NonNegativeInt = 0
    groups: list[LeaderboardGroup]
    partial_hidden: NonNegativeInt = 0
