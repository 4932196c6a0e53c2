"""Exporting a run (issue 30 §4) on SQLite and PostgreSQL: one row per (case, sample), equal to
the results API, in JSONL, CSV and Parquet, under the run's own scorecard or a rescore's."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import orjson
import pytest

from benchbook.contracts.dataset import GraderSpec
from benchbook.errors import InvalidInput, NotFound
from benchbook.row_formats import write_rows
from benchbook.services import run_exports, run_results, scorecards
from benchbook.services.context import Context
from tests.services.leaderboard_stage import Entry, report, stage


def _api_rows(ctx: Context, run_id: str) -> list[dict[str, object]]:
    """What ``list_run_results`` says, paged to the end, in the export's terms."""
    out, after = [], None
    while True:
        page = run_results.list_run_results(ctx, run_id, after=after, limit=7)
        for r in page:
            row: dict[str, object] = {
                "case_id": r.case_id,
                "sample": r.sample,
                "status": r.status,
                "passed": r.passed,
                "answer": r.answer,
                "error": r.error,
                "cost_usd": r.cost_usd,
                "duration_ms": r.duration_ms,
            }
            row |= {f"score.{s.metric}": s.value for s in r.scores}
            out.append(row)
        if len(page) < 7:
            return out
        after = f"{page[-1].position}:{page[-1].sample}"


def test_the_export_has_one_row_per_case_and_sample_equal_to_the_results_api(
    ctx: Context,
) -> None:
    stage(ctx)
    run = report(ctx, "board", Entry("twice@1.0.0", 6, 0.002, repeats=2))
    lines = b"".join(run_exports.export_run(ctx, run.id)).splitlines()
    rows = [orjson.loads(line) for line in lines]
    assert len(rows) == 20 == len({(r["case_id"], r["sample"]) for r in rows})
    api = _api_rows(ctx, run.id)
    assert [{k: r[k] for k in a} for r, a in zip(rows, api, strict=True)] == api
    assert {r["input_tokens"] for r in rows} == {1500} and rows[0]["output_tokens"] == 20
    assert sum(r["passed"] for r in rows) == 12 and "score.numeric" in rows[0]

    text = b"".join(run_exports.export_run(ctx, run.id, format="csv")).decode()
    table = list(csv.DictReader(io.StringIO(text)))
    assert len(table) == 20 and table[0]["case_id"] == "c0" and table[0]["passed"] == "true"
    assert list(table[0])[-1] == "score.numeric"


def test_a_rescores_scores_and_verdicts_are_exported_and_parquet_reads_back(
    ctx: Context, tmp_path: Path
) -> None:
    made = stage(ctx)
    run = made["mid@1.0.0"]
    card = scorecards.rescore_run(ctx, run.id, [GraderSpec(id="answer-match")])
    columns, batches = run_exports.run_export_batches(ctx, run.id, card.id)
    assert [n for n, _ in columns][-1] == "score.answer-match"
    out = tmp_path / "run.parquet"
    assert write_rows(columns, batches, "parquet", out) == 10
    import pyarrow.parquet as pq

    table = pq.read_table(out).to_pylist()
    assert [r["case_id"] for r in table] == [f"c{i}" for i in range(10)]
    assert [r["passed"] for r in table] == [True] * 7 + [False] * 3
    assert table[0]["score.answer-match"] == 1.0 and table[0]["input_tokens"] == 1500


def test_a_scorecard_of_another_run_an_unknown_run_and_a_bad_format_are_refused(
    ctx: Context,
) -> None:
    made = stage(ctx)
    other = made["best@1.0.0"].scorecard_id
    with pytest.raises(InvalidInput, match="not a scorecard of run"):
        run_exports.export_run(ctx, made["mid@1.0.0"].id, other)
    with pytest.raises(NotFound):
        run_exports.export_run(ctx, "run_nope")
    with pytest.raises(InvalidInput, match="format"):
        run_exports.export_run(ctx, made["mid@1.0.0"].id, format="xlsx")  # type: ignore[arg-type]
