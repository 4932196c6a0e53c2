"""Cells of the run tables (``runs list``, ``runs results``): what the grader compared and a
run's error counts, as text."""

from __future__ import annotations

import orjson

from benchbook.contracts.run import Run
from benchbook.contracts.score import Score

ANSWER_WIDTH = 60
"""Characters of an answer ``runs results`` shows without ``--wide``."""


def score_detail(scores: list[Score], key: str) -> str:
    """The first score's ``detail[key]`` (the numeric and answer-match graders report
    ``expected`` and ``extracted``) as text, or empty."""
    for score in scores:
        if key in score.detail and score.detail[key] is not None:
            value = score.detail[key]
            return value if isinstance(value, str) else orjson.dumps(value).decode()
    return ""


def run_errors(run: Run) -> str:
    """Harness errors, and grader errors when the counts carry them."""
    grader = getattr(run.counts, "grader_errors", None)
    text = f"{run.counts.error:,}"
    return f"{text} + {grader:,} grader" if grader else text
