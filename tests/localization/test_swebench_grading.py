"""SWE-bench grading of a saved run (SPEC I): official predictions, the report imported as
``swe-bench`` scores on a new scorecard, and the harness refusing clearly without Docker."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from benchbook.errors import Forbidden, InvalidInput
from benchbook.eval.swebench_grading import check_harness
from benchbook.services import run_results, scorecards, swebench
from benchbook.services.context import Context
from tests.localization.conftest import ORIGINAL, ContextBenchRun, as_viewer

XARRAY, JQ = "pydata__xarray-4075", "jqlang__jq-2654"
HARNESS_STUB = Path(__file__).with_name("swebench_harness_stub.py")


def instance_report(resolved: bool, failing: list[str]) -> dict[str, Any]:
    """One instance in the shape of the harness's ``report.json`` (swebench ``grading.py``)."""
    return {
        "patch_is_None": False,
        "patch_exists": True,
        "patch_successfully_applied": True,
        "resolved": resolved,
        "tests_status": {
            "FAIL_TO_PASS": {"success": ["test_a"], "failure": failing},
            "PASS_TO_PASS": {"success": ["test_b", "test_c"], "failure": []},
            "FAIL_TO_FAIL": {"success": [], "failure": []},
            "PASS_TO_FAIL": {"success": [], "failure": []},
        },
    }


def test_predictions_are_the_official_rows_with_the_runs_diff(cb_run: ContextBenchRun) -> None:
    out = swebench.export_swebench_predictions(cb_run.ctx, cb_run.run_id, "my-agent")
    rows = {p["instance_id"]: p for p in out.predictions}
    assert set(rows) == set(ORIGINAL.values())
    for row in rows.values():
        assert set(row) == {"instance_id", "model_name_or_path", "model_patch"}
        assert row["model_name_or_path"] == "my-agent"
    trace = run_results.get_run_trace(
        cb_run.ctx, cb_run.run_id, "SWE-Bench-Verified__python__maintenance__bugfix__90532e38"
    )
    assert rows[XARRAY]["model_patch"] == trace.env_snapshot.diff
    assert rows[XARRAY]["model_patch"].startswith("diff --git a/")
    default = swebench.export_swebench_predictions(cb_run.ctx, cb_run.run_id)
    assert default.model_name_or_path == "localizer@1.0.0"


def test_an_instance_report_becomes_a_new_scorecard_and_the_runs_own_is_unchanged(
    cb_run: ContextBenchRun,
) -> None:
    ctx, run_id = cb_run.ctx, cb_run.run_id
    (own,) = scorecards.list_scorecards(ctx, run_id)
    report = {XARRAY: instance_report(True, []), JQ: instance_report(False, ["test_exit"])}
    card = swebench.import_swebench_report(ctx, run_id, report)
    assert card.rescore_of == own.id and card.id != own.id
    assert (card.n, card.passed) == (2, 1)
    assert card.metrics["swe-bench"].mean == 0.5
    cards = scorecards.list_scorecards(ctx, run_id)
    assert [c.id for c in cards] == [own.id, card.id]
    assert cards[0].model_dump() == own.model_dump()
    assert card.plan.graders[0].id == "swe-bench"


def test_a_run_level_summary_counts_errors_and_empty_patches(cb_run: ContextBenchRun) -> None:
    summary = {
        "total_instances": 300,
        "submitted_instances": 2,
        "completed_instances": 1,
        "resolved_instances": 0,
        "unresolved_instances": 0,
        "empty_patch_instances": 1,
        "error_instances": 1,
        "completed_ids": [JQ],
        "incomplete_ids": [],
        "empty_patch_ids": [XARRAY],
        "submitted_ids": [JQ, XARRAY],
        "resolved_ids": [],
        "unresolved_ids": [],
        "error_ids": [JQ],
        "schema_version": 2,
    }
    card = swebench.import_swebench_report(cb_run.ctx, cb_run.run_id, summary)
    assert (card.n, card.passed) == (2, 0)
    assert card.metrics["swe-bench"].errors == 1


@pytest.mark.parametrize(
    ("report", "message"),
    [
        ({"django__django-1": instance_report(True, [])}, "not in run .*django__django-1"),
        ({XARRAY: {"tests_status": {}}}, f"'{XARRAY}'.*boolean 'resolved'"),
        (
            {XARRAY: {**instance_report(True, []), "tests_status": {"FAIL_TO_PASS": []}}},
            "tests_status.FAIL_TO_PASS",
        ),
        ({"resolved_ids": [XARRAY], "error_ids": [XARRAY]}, "both error_ids and resolved_ids"),
        ({"resolved_ids": "all"}, "'resolved_ids' must be a list"),
        ({}, "non-empty JSON object"),
    ],
)
def test_a_bad_report_is_a_clear_error_and_stores_nothing(
    cb_run: ContextBenchRun, report: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        swebench.import_swebench_report(cb_run.ctx, cb_run.run_id, report)
    assert len(scorecards.list_scorecards(cb_run.ctx, cb_run.run_id)) == 1


def test_without_docker_the_harness_is_unavailable_with_a_clear_message(
    cb_run: ContextBenchRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()
    (bare / "git").symlink_to("/usr/bin/git")
    monkeypatch.setenv("PATH", str(bare))
    assert check_harness("python3").message.startswith("Docker not found on PATH")
    result = swebench.evaluate_swebench_run(cb_run.ctx, cb_run.run_id)
    assert result.status == "unavailable" and "Docker not found" in result.message
    assert result.scorecard is None
    assert len(scorecards.list_scorecards(cb_run.ctx, cb_run.run_id)) == 1


def test_importing_needs_runs_write_and_exporting_runs_read(cb_run: ContextBenchRun) -> None:
    viewer = as_viewer(cb_run.ctx)
    assert swebench.export_swebench_predictions(viewer, cb_run.run_id).predictions
    with pytest.raises(Forbidden, match="runs:write"):
        swebench.import_swebench_report(viewer, cb_run.run_id, {XARRAY: instance_report(True, [])})


def test_with_docker_and_the_harness_its_reports_are_imported(
    cb_run: ContextBenchRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    docker = bin_dir / "docker"
    docker.write_text("#!/bin/sh\necho 27.0.0\n")
    python = bin_dir / "python-with-swebench"
    python.write_text(f'#!/bin/sh\nexec {sys.executable} {HARNESS_STUB} "$@"\n')
    for script in (docker, python):
        script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    ctx = cb_run.ctx
    configured = ctx.settings.model_copy(update={"swebench_python": str(python)})
    ctx = Context(principal=ctx.principal, engine=ctx.engine, settings=configured)
    result = swebench.evaluate_swebench_run(ctx, cb_run.run_id, dataset_name="local.json")
    assert result.status == "graded", (result.message, result.stderr_tail)
    assert result.argv[1:4] == ["-m", "swebench.harness.run_evaluation", "--dataset_name"]
    card = result.scorecard
    assert card is not None and (card.n, card.passed) == (2, 1)
    scores = {
        r.case_id: r for r in run_results.list_run_results(ctx, cb_run.run_id)
    }  # the run's own scores are untouched: still localization only
    assert all(s.grader == "localization" for r in scores.values() for s in r.scores)
