"""What a reader of another tool's output hands the import service (issue 31).

A :class:`ForeignLog` is one run of one task by one model in another tool; each
:class:`ForeignSample` is one (sample, epoch) of it with the answer to grade, the trace to keep
and the tool's own scores. :func:`tool_score` turns one tool score into a Benchbook
:class:`~benchbook.contracts.score.Score` the same way for every tool.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import JsonValue

from benchbook.contracts.run import Trace
from benchbook.contracts.score import Score
from benchbook.errors import ContentConflict

#: At most this many (sample, epoch) rows per imported log (``report_run``'s own bound).
MAX_SAMPLES = 100_000


@dataclass
class ForeignSample:
    """One (sample, epoch) another tool ran.

    Attributes:
        sample_id: the tool's sample id as text (Inspect ``sample.id``, lm-eval ``doc_id``).
        case_id: the case id the sample itself names, when it names one (Inspect: the sample id;
            lm-eval: the document's ``id`` column of a Benchbook export), else None.
        sample: 0-based repeat index (Inspect's epoch − 1).
        input_text: the sample's input text, for matching by content (None: not plain text).
        answer: the final answer to grade; ``error`` the tool's own failure message, if any.
        trace: messages, tool calls, usage (``events`` per model), timing.
        scores: the tool's own scores, one per scorer or metric (grader = the tool).
    """

    sample_id: str
    case_id: str | None
    sample: int
    input_text: str | None
    answer: str
    error: str | None
    trace: Trace
    scores: list[Score] = field(default_factory=list)


@dataclass
class ForeignLog:
    """One run of another tool: ``tool`` (``inspect``/``lm-eval``) at ``tool_version`` ran
    ``task`` with ``model``; ``dataset_name`` is what the log calls its dataset (None: not
    recorded); ``record`` is what goes under ``reproducibility.import`` (model arguments, the
    log's sha256, the tool's reported metrics …); ``metrics`` the tool's scorer/metric names."""

    tool: str
    tool_version: str | None
    task: str
    model: str
    dataset_name: str | None
    record: dict[str, JsonValue]
    metrics: list[str]
    samples: list[ForeignSample]


def tool_score(tool: str, metric: str, value: float, raw: JsonValue, **detail: JsonValue) -> Score:
    """A tool's score as a :class:`Score` (grader ``tool``, metric ``metric``).

    ``value`` is the tool's own float reading of ``raw`` (Inspect's ``value_to_float``, lm-eval's
    number). A value of exactly 0 or 1 is a verdict (``passed``); any other finite value is a
    measurement (``passed`` None); NaN or ±inf is ``status = skipped`` (not a number to average).
    ``detail`` keeps ``raw`` as ``value`` plus the given keys that are not None.
    """
    kept: dict[str, JsonValue] = {
        "value": raw,
        **{k: v for k, v in detail.items() if v is not None},
    }
    if not math.isfinite(value):
        kept["reason"] = "the tool's value is not a finite number"
        return Score(grader=tool, metric=metric, value=0.0, status="skipped", detail=kept)
    passed = (value == 1.0) if value in (0.0, 1.0) else None
    return Score(grader=tool, metric=metric, value=float(value), passed=passed, detail=kept)


def check_sample_count(n: int, where: str) -> None:
    """ContentConflict when a log holds more than :data:`MAX_SAMPLES` (sample, epoch) rows."""
    if n > MAX_SAMPLES:
        raise ContentConflict(
            f"{where}: more than {MAX_SAMPLES} (sample, epoch) rows; import it in parts",
            {"errors": [{"path": where, "message": "too many samples"}]},
        )


def file_sha256(path: Path) -> str:
    """The sha256 of a file, read 1 MiB at a time."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()
