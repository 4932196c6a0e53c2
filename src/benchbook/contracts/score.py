"""Score contract (SPEC H): what one grader says about one case's prediction.

A score is data, never an exception: a grader that cannot decide returns ``status = error`` (bad
gold, bad config) or ``skipped`` (the grader needs something this call does not have, for
example a model endpoint or the case workspace), with the reason in ``detail``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, JsonValue

from benchbook.contracts.common import STRICT, NonEmptyStr

ScoreStatus = Literal["ok", "error", "skipped"]


class Score(BaseModel):
    """``{grader, metric, value, passed, status, detail}`` for one case and one grader.

    Attributes:
        grader: the grader family id (``numeric``, ``gaia``, ``judge`` …).
        metric: the metric name; the grader id for single-metric graders, or
            ``judge:<judge_id>:milestone:<milestone_id>`` for a milestone (SPEC A).
        value: the metric value, a finite float (``1.0``/``0.0`` for pass/fail graders).
        passed: the verdict, or ``None`` when the grader gives no verdict (error, skipped, or a
            measurement such as cost).
        status: ``ok`` (graded), ``error`` (could not grade: bad gold or config) or ``skipped``.
        detail: JSON data explaining the score (extracted answer, normalized forms, reason).
    """

    model_config = STRICT
    grader: NonEmptyStr
    metric: NonEmptyStr
    value: float
    passed: bool | None = None
    status: ScoreStatus = "ok"
    detail: dict[str, JsonValue] = Field(default_factory=dict)
