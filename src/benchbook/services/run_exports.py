"""Exporting a run (issue 30 §4): one flat row per (case, sample) with its status, answer, every
score of one scorecard, tokens, cost, latency and error — streamed a page at a time, so a
100k-case run exports in bounded memory (``bench/run_export.py`` measures it).

Columns: ``case_id, sample, status, passed, answer, error, cost_usd, input_tokens,
output_tokens, duration_ms``, then ``score.<metric>`` for each metric the scorecard summarizes
(sorted), so every row of a file has the same columns; a score that was skipped or could not
be graded is blank there, like a metric the row has no score for.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal

import orjson

from benchbook.errors import InvalidInput
from benchbook.row_formats import Column, Row, text_chunks
from benchbook.services.context import Context
from benchbook.services.runs import load_run
from benchbook.services.scorecards import load_scorecard, read_scorecard
from benchbook.store import run_exports as repo

EXPORT_PAGE = 2000
"""Results read per query (one batch of the output)."""
RunExportFormat = Literal["jsonl", "csv"]
BASE_COLUMNS: tuple[Column, ...] = (
    ("case_id", "str"),
    ("sample", "int"),
    ("status", "str"),
    ("passed", "bool"),
    ("answer", "str"),
    ("error", "str"),
    ("cost_usd", "float"),
    ("input_tokens", "int"),
    ("output_tokens", "int"),
    ("duration_ms", "int"),
)
SCORE_PREFIX = "score."


def run_export_batches(
    ctx: Context, run_id: str, scorecard_id: str | None = None
) -> tuple[list[Column], Iterator[list[Row]]]:
    """The export's columns and its rows in batches of :data:`EXPORT_PAGE`, in dataset order.
    Not an operation: the core of :func:`export_run` and of the CLI's Parquet file.

    Args:
        scorecard_id: whose verdicts and scores (default: the run's own scorecard).

    Raises (eagerly, before the first batch):
        NotFound: unknown run or scorecard (or another workspace's).
        InvalidInput: the scorecard is not one of this run's.
    """
    ctx.require("runs:read")
    with ctx.engine.connect() as conn:
        run = load_run(conn, ctx, run_id)
        chosen = scorecard_id or run.scorecard_id or ""
        head, card_run = load_scorecard(conn, ctx, chosen)
        if card_run.id != run.id:
            raise InvalidInput(
                f"scorecard {chosen} is not a scorecard of run {run_id}",
                {"scorecard_id": chosen, "run_id": run_id},
            )
        metrics = sorted(read_scorecard(conn, head, run).metrics)
    columns: list[Column] = [*BASE_COLUMNS, *((f"{SCORE_PREFIX}{m}", "float") for m in metrics)]
    own = chosen == run.scorecard_id

    def batches() -> Iterator[list[Row]]:
        after: tuple[int, int] | None = None
        while True:
            with ctx.engine.connect() as conn:
                page = repo.export_page(conn, run_id, chosen, own, after, EXPORT_PAGE)
            if not page:
                return
            yield [_row(r, metrics) for r in page]
            after = (page[-1].position, page[-1].sample)

    return columns, batches()


def _row(r: Any, metrics: list[str]) -> Row:
    rec = r._mapping
    row = {name: rec[name] for name, _ in BASE_COLUMNS}
    if row["status"] == "not_run":
        row["passed"] = None
    scores = orjson.loads(rec["scores"] or "[]")
    # A skipped or errored score's value (0.0) measured nothing: blank, as a missing metric.
    values = {s["metric"]: s["value"] for s in scores if s.get("status", "ok") == "ok"}
    for metric in metrics:
        row[SCORE_PREFIX + metric] = values.get(metric)
    return row


def export_run(
    ctx: Context, run_id: str, scorecard_id: str | None = None, format: RunExportFormat = "jsonl"
) -> Iterator[bytes]:
    """Stream a run's results as ``jsonl`` (one object per (case, sample)) or ``csv`` (a
    header, then one line each), one chunk per page of 2,000 results; columns as the module
    says. Parquet is written by the CLI and the client from the same rows.

    Raises (eagerly): NotFound for an unknown run or scorecard; InvalidInput for a scorecard
    of another run or an unknown format.
    """
    if format not in ("jsonl", "csv"):
        raise InvalidInput("format must be jsonl or csv", {"format": format})
    columns, batches = run_export_batches(ctx, run_id, scorecard_id)

    return text_chunks(columns, batches, format)
