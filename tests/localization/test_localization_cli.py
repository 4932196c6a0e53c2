"""``benchbook localization …`` and ``benchbook swebench …`` on a real ContextBench run."""

from __future__ import annotations

from pathlib import Path

import orjson

from tests.cli.conftest import cli_env, invoke
from tests.localization.conftest import ContextBenchRun
from tests.localization.test_contextbench_bridge import scorer
from tests.localization.test_swebench_grading import XARRAY, instance_report

__all__ = ["cli_env"]  # the fixture, imported for this module's tests
ODD = "Multi-SWE-Bench__c__maintenance__bugfix__49f4a0f4"


def lines(path: Path) -> list[dict[str, object]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def test_export_writes_both_files_and_refuses_an_output_jsonl_name(
    cb_run: ContextBenchRun, cli_env: dict[str, str], tmp_path: Path
) -> None:
    gold, pred = tmp_path / "gold.jsonl", tmp_path / "preds.jsonl"
    result = invoke(
        cli_env, "localization", "export", cb_run.run_id, "--gold", str(gold), "--pred", str(pred)
    )
    assert result.exit_code == 0, result.output
    assert "wrote 2 gold rows" in result.stdout and "wrote 2 prediction rows" in result.stdout
    assert {g["inst_id"] for g in lines(gold)} == {p["instance_id"] for p in lines(pred)}
    refused = invoke(
        cli_env,
        "localization",
        "export",
        cb_run.run_id,
        "--gold",
        str(gold),
        "--pred",
        str(tmp_path / "model_output.jsonl"),
    )
    assert refused.exit_code == 1 and "output.jsonl" in refused.stderr
    assert not (tmp_path / "model_output.jsonl").exists()


def test_score_shows_ours_beside_upstream_and_flags_the_difference(
    cb_run: ContextBenchRun, cli_env: dict[str, str]
) -> None:
    agreeing = invoke(cli_env, "localization", "score", cb_run.run_id, "--scorer-cmd", scorer())
    assert agreeing.exit_code == 0, agreeing.output
    assert "2 instance(s) agree, 0 differ" in agreeing.stdout
    differing = invoke(
        cli_env,
        "--",
        "localization",
        "score",
        cb_run.run_id,
        "--json",
        "--scorer-cmd",
        scorer("--end-exclusive", ODD),
    )
    assert differing.exit_code == 1
    data = orjson.loads(differing.stdout)
    assert (data["agreeing"], data["differing"]) == (1, 1)
    flagged = {i["instance_id"]: i["differences"] for i in data["instances"]}
    assert flagged[ODD] and not flagged["SWE-Bench-Verified__python__maintenance__bugfix__90532e38"]


def test_swebench_predictions_import_and_evaluate(
    cb_run: ContextBenchRun, cli_env: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "preds.jsonl"
    written = invoke(cli_env, "swebench", "predictions", cb_run.run_id, "--out", str(out))
    assert written.exit_code == 0 and "wrote 2 predictions" in written.stdout
    assert {r["instance_id"] for r in lines(out)} == {XARRAY, "jqlang__jq-2654"}
    as_json = invoke(cli_env, "swebench", "predictions", cb_run.run_id, "-o", str(out), "--json")
    assert orjson.loads(as_json.stdout) == {"out": str(out), "rows": 2, "skipped": []}
    report = tmp_path / "report.json"
    report.write_bytes(orjson.dumps({XARRAY: instance_report(True, [])}))
    imported = invoke(cli_env, "swebench", "import", cb_run.run_id, str(report))
    assert imported.exit_code == 0, imported.output
    assert "resolved 1/2" in imported.stdout
    report.write_bytes(orjson.dumps({"astropy__astropy-1": instance_report(True, [])}))
    bad = invoke(cli_env, "swebench", "import", cb_run.run_id, str(report))
    assert bad.exit_code == 1 and "astropy__astropy-1" in bad.stderr
    env = {**cli_env, "BENCHBOOK_SWEBENCH_PYTHON": "/nonexistent/python", "PATH": "/usr/bin:/bin"}
    evaluated = invoke(env, "swebench", "evaluate", cb_run.run_id)
    assert evaluated.exit_code == 1 and "unavailable: Docker not found on PATH" in evaluated.stderr


def test_runs_show_and_rescore_print_the_localization_aggregates(
    cb_run: ContextBenchRun, cli_env: dict[str, str]
) -> None:
    from benchbook.services import scorecards

    (own,) = scorecards.list_scorecards(cb_run.ctx, cb_run.run_id)
    assert own.localization is not None
    line = own.localization["micro"]["line"]
    expected = f"  line   {line['coverage']:.3f} / {line['precision']:.3f} |"  # type: ignore[index]
    for args in (
        ("runs", "show", cb_run.run_id),
        ("runs", "rescore", cb_run.run_id, "-g", "localization"),
    ):
        result = invoke(cli_env, *args)
        assert result.exit_code == 0, result.output
        assert "localization: 2 instance(s), 0 errored" in result.stdout
        assert expected in result.stdout
