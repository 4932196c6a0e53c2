"""``benchbook runs export`` (tester's findings): ``-o -`` writes to stdout (jsonl, csv; parquet
refused, naming the cause), and CSV cells that a spreadsheet would run as a formula are
prefixed with ``'`` (JSONL keeps them as is)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from benchbook.contracts.run import ReportedResult, ReportRunRequest
from benchbook.services import run_reports
from benchbook.services.context import Context
from tests.cli.conftest import invoke
from tests.eval.test_runs import arithmetic

FORMULA = '=HYPERLINK("http://evil.example","x")'


def _run(ctx: Context) -> str:
    from benchbook.services import datasets as ds

    ds.register_dataset(ctx, arithmetic("calc", n=3))
    answers = [FORMULA, "@SUM(A1)", "-1"]
    results = [ReportedResult(case_id=f"c{i}", answer=a) for i, a in enumerate(answers)]
    request = ReportRunRequest(dataset="calc", harness="h@1.0.0", results=results)
    return run_reports.report_run(ctx, request).id


def test_out_dash_writes_to_stdout_and_csv_cells_cannot_be_formulas(
    ctx: Context, cli_env: dict[str, str], tmp_path: Path, monkeypatch: object
) -> None:
    run_id = _run(ctx)
    monkeypatch.chdir(tmp_path)  # type: ignore[attr-defined]
    result = invoke(cli_env, "runs", "export", run_id, "--format", "csv", "-o", "-")
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "-").exists()
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [r["answer"] for r in rows] == ["'" + FORMULA, "'@SUM(A1)", "'-1"]
    jsonl = invoke(cli_env, "runs", "export", run_id, "-o", "-")
    assert jsonl.exit_code == 0, jsonl.output
    assert [json.loads(line)["answer"] for line in jsonl.stdout.splitlines()] == [
        FORMULA,
        "@SUM(A1)",
        "-1",
    ]
    parquet = invoke(cli_env, "runs", "export", run_id, "--format", "parquet", "-o", "-")
    assert parquet.exit_code != 0 and "stdout" in parquet.output and "parquet" in parquet.output
    assert not (tmp_path / "-").exists()
