"""The upstream ContextBench bridge (SPEC I; LOCALIZATION §5) on a real run."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from benchbook.contracts.dataset import GraderSpec
from benchbook.datasets.contextbench import RELEASE_FILE, RELEASE_SHA256
from benchbook.errors import Forbidden, InvalidInput
from benchbook.services import localization, runs, scorecards
from benchbook.services.context import Context
from tests.localization.conftest import ORIGINAL, ROWS, ContextBenchRun, as_viewer

STUB = Path(__file__).with_name("contextbench_scorer_stub.py")
SRC = Path(__file__).resolve().parents[2] / "src"
ROOT = Path(__file__).resolve().parents[2]


def scorer(*flags: str) -> str:
    return f"env PYTHONPATH={SRC}:{ROOT} {sys.executable} {STUB} {' '.join(flags)}"


def test_export_writes_the_official_gold_and_prediction_rows(cb_run: ContextBenchRun) -> None:
    export = localization.export_localization_run(cb_run.ctx, cb_run.run_id)
    assert export.skipped == [] and export.warnings == []
    gold = {g["inst_id"]: g for g in export.gold}
    assert set(gold) == set(ROWS)
    for iid, g in gold.items():
        assert set(g) == {
            "inst_id",
            "original_inst_id",
            "commit",
            "repo_url",
            "gold_ctx",
            "patch",
            "test_patch",
            "split",
        }
        assert g["original_inst_id"] == ORIGINAL[iid]
        scorer_repos = cb_run.mirrors.parent / "contextbench" / "repos"
        assert Path(str(g["repo_url"])).is_relative_to(scorer_repos)  # issue 29, not the mirror
        assert g["patch"] and g["test_patch"] and g["gold_ctx"]
    xarray = gold["SWE-Bench-Verified__python__maintenance__bugfix__90532e38"]
    assert xarray["split"] == "Verified" and xarray["commit"].startswith("19b088636eb7")
    assert xarray["gold_ctx"][0]["file"] == "xarray/core/weighted.py"
    for p in export.predictions:
        assert set(p) == {"instance_id", "repo_url", "commit", "model_patch", "traj_data"}
        traj = p["traj_data"]
        assert set(traj) == {"pred_steps", "pred_files", "pred_spans", "pred_symbols"}
        assert traj["pred_files"] and len(traj["pred_steps"]) == len(traj["pred_files"])
        assert p["model_patch"].startswith("diff --git")


def test_the_upstream_scorer_agrees_except_where_its_rule_differs(
    cb_run: ContextBenchRun,
) -> None:
    odd = "Multi-SWE-Bench__c__maintenance__bugfix__49f4a0f4"
    result = localization.score_localization_upstream(
        cb_run.ctx, cb_run.run_id, scorer_cmd=scorer("--end-exclusive", odd)
    )
    assert result.error is None, (result.error, result.stderr_tail)
    assert "instances: 2, scored: 2" in result.stderr_tail
    by_id = {i.instance_id: i for i in result.instances}
    same = by_id["SWE-Bench-Verified__python__maintenance__bugfix__90532e38"]
    assert same.agree and same.differences == [] and same.upstream is not None
    assert same.ours is not None and same.ours["final"] == {
        lv: {**m, "f1": same.ours["final"][lv]["f1"]} for lv, m in same.upstream["final"].items()
    }
    other = by_id[odd]
    assert not other.agree
    metrics = {d.metric for d in other.differences}
    assert "final.line.gold_size" in metrics and "final.span.gold_size" in metrics
    gold = next(d for d in other.differences if d.metric == "final.line.gold_size")
    assert gold.ours is not None and gold.upstream is not None and gold.upstream < gold.ours
    assert (result.agreeing, result.differing) == (1, 1)
    # the cache is the scorer's own and kept; its temp root is gone
    cache = cb_run.ctx.settings.home / "contextbench" / "cache"
    assert list(cache.glob("*.git")) and not list(cache.parent.glob("scorer-*"))


def test_a_failing_or_garbled_scorer_is_reported_not_raised(cb_run: ContextBenchRun) -> None:
    crashed = localization.score_localization_upstream(
        cb_run.ctx, cb_run.run_id, scorer_cmd=scorer("--fail")
    )
    assert crashed.error == "the scorer exited with status 3"
    assert "simulated crash" in crashed.stderr_tail
    assert all(i.upstream_error == "no row" and not i.agree for i in crashed.instances)
    assert crashed.differing == 2
    garbled = localization.score_localization_upstream(
        cb_run.ctx, cb_run.run_id, scorer_cmd=scorer("--garble")
    )
    assert garbled.error is None and garbled.problems[0].startswith("line 3: not JSON")
    assert garbled.agreeing == 2
    missing = localization.score_localization_upstream(
        cb_run.ctx, cb_run.run_id, scorer_cmd="/nonexistent/scorer"
    )
    assert missing.error is not None and "could not start" in missing.error


def test_rescoring_the_saved_run_gives_its_own_numbers_without_the_harness(
    cb_run: ContextBenchRun,
) -> None:
    ctx = cb_run.ctx
    (own,) = scorecards.list_scorecards(ctx, cb_run.run_id)
    again = scorecards.rescore_run(ctx, cb_run.run_id, [GraderSpec(id="localization")])
    assert again.rescore_of == own.id
    assert again.metrics["localization"].n == 2
    assert again.metrics["localization"] == own.metrics["localization"]
    # the scorecard carries the micro/macro aggregates of the per-case details, and the rescore
    # gives the same ones (red before: the scorecard had only the mean line coverage)
    assert own.localization is not None and own.localization == again.localization
    assert (own.localization["instances"], own.localization["errored"]) == (2, 0)
    from benchbook.services import run_results

    first = {r.case_id: r.scores for r in run_results.list_run_results(ctx, cb_run.run_id)}
    assert all(s[0].status == "ok" for s in first.values())


def test_only_installation_admins_pass_a_scorer_command_and_one_is_needed(
    cb_run: ContextBenchRun,
) -> None:
    viewer = as_viewer(cb_run.ctx)
    assert localization.export_localization_run(viewer, cb_run.run_id).gold
    with pytest.raises(Forbidden, match="installation admins"):
        localization.score_localization_upstream(viewer, cb_run.run_id, scorer_cmd="true")
    with pytest.raises(InvalidInput, match="no scorer command"):
        localization.score_localization_upstream(cb_run.ctx, cb_run.run_id)
    configured = cb_run.ctx.settings.model_copy(update={"contextbench_scorer_cmd": scorer()})
    viewer_cfg = Context(principal=viewer.principal, engine=viewer.engine, settings=configured)
    assert localization.score_localization_upstream(viewer_cfg, cb_run.run_id).agreeing == 2


def test_the_run_keeps_its_reproducibility_record(cb_run: ContextBenchRun) -> None:
    run = runs.get_run(cb_run.ctx, cb_run.run_id)
    record = run.reproducibility
    assert record["dataset_content_hash"] == run.dataset_content_hash
    assert record["release"] == {
        "kind": "file",
        "file": RELEASE_FILE,
        "sha256": RELEASE_SHA256,
        "revision": None,
        "dataset": None,
    }
    assert record["plan_hash"] == run.plan_hash and len(str(record["pricing_sha256"])) == 64
    assert record["code_revision"] and record["executor"] == "local"
    scorers = record["scorers"]
    assert isinstance(scorers, dict) and isinstance(scorers["localization"], dict)
    assert scorers["localization"]["tree_sitter_language_pack"]
    timings = record["timings"]
    assert isinstance(timings, dict) and isinstance(timings["wall_ms"], int)
    assert timings["started_at"] and timings["finished_at"]
    audit = record["checkout_audit"]
    assert isinstance(audit, dict) and (audit["ok"], audit["failed"]) == (2, 0)
    commits = {c["case_id"]: c["commit"] for c in audit["cases"]}  # type: ignore[index,union-attr]
    assert commits["SWE-Bench-Verified__python__maintenance__bugfix__90532e38"] == (
        "19b088636eb7d3f65ab7a1046ac672e0689371d8"
    )


def test_a_repository_missing_from_the_mirror_cache_is_named(cb_run: ContextBenchRun) -> None:
    shutil.rmtree(cb_run.mirrors / "github.com" / "pydata")
    export = localization.export_localization_run(cb_run.ctx, cb_run.run_id)
    (warning,) = export.warnings
    assert "no mirror of https://github.com/pydata/xarray.git" in warning
    urls = {g["inst_id"]: g["repo_url"] for g in export.gold}
    assert urls["SWE-Bench-Verified__python__maintenance__bugfix__90532e38"] == (
        "https://github.com/pydata/xarray.git"
    )
    again = scorecards.rescore_run(cb_run.ctx, cb_run.run_id, [GraderSpec(id="localization")])
    assert (again.metrics["localization"].n, again.metrics["localization"].skipped) == (1, 1)
