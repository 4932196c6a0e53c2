"""A case's history across runs and the flaky cases of a run (issue 30 §2)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field, NonNegativeInt

from benchbook.contracts.common import STRICT


class CaseHistoryItem(BaseModel):
    """One (run, sample) result of a case: the run's harness, dataset version and date, the
    result's status and verdict under the run's own scorecard, its scores ``{metric: value}``,
    cost and latency; ``cursor`` pages on from it (``before``)."""

    model_config = STRICT
    run_id: str
    harness: str
    dataset_version: str
    run_created_at: datetime
    sample: NonNegativeInt
    status: str
    passed: bool | None = None
    error: str | None = None
    scores: dict[str, float] = Field(default_factory=dict)
    cost_usd: float | None = None
    duration_ms: NonNegativeInt = 0
    cursor: str


class CaseHistoryPage(BaseModel):
    """Newest run first (then sample); ``next_before`` is the cursor of the next page (None:
    no more)."""

    model_config = STRICT
    dataset_id: str
    case_id: str
    items: list[CaseHistoryItem]
    next_before: str | None = None


FlakyKind = Literal["samples", "runs"]


class FlakyCase(BaseModel):
    """A case whose verdict differs: across the samples of this run (``samples``) and/or
    across this run and the other ended runs of the same harness@version on the same
    dataset version (``runs``). ``passed``/``results`` count its passing and all results
    over those runs; ``runs`` how many runs hold it."""

    model_config = STRICT
    case_id: str
    kinds: list[FlakyKind]
    passed: NonNegativeInt
    results: NonNegativeInt
    runs: NonNegativeInt
