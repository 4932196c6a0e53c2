"""The localization bridge end to end on every bundled repository:
``.venv/bin/python -m bench.localization_bridge``.

In a fresh ``BENCHBOOK_HOME`` (SQLite): mirrors built from the eight bundles of
``../shared/data/contextbench/repos``, the 50-row ContextBench release imported, and the toy
``examples/harnesses/grep_localizer.py`` command harness run on the eight rows whose
repositories are bundled (concurrency 4). Then, each timed: ``export_localization_run``,
``score_localization_upstream`` with the contract-true stand-in scorer of the test suite (first
call: the scorer fills its cache; second: cached), ``rescore_run`` with ``localization`` (from the
mirror, no harness) and ``export_swebench_predictions``. Prints the numbers and checks that
the scorer agrees on every instance and the rescore equals the run's own scores — exits non-zero
otherwise, or when the comparison takes over 30 s.

Reads ``BENCHBOOK_SHARED_DATA`` (default ``../shared/data``).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

import orjson
from tests.repo_bundles import mirror_from_bundle

from bench.localization import DATA
from benchbook.contracts.dataset import GraderSpec
from benchbook.contracts.imports import ImportRequest
from benchbook.contracts.run import RunSettings, StartRunRequest
from benchbook.datasets.contextbench import load_contextbench
from benchbook.services import harnesses, imports, localization, run_execution, runs, scorecards
from benchbook.services import swebench as swe
from benchbook.services.context import local_admin_context, open_engine
from benchbook.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
STUB = ROOT / "tests" / "localization" / "contextbench_scorer_stub.py"
TARGET_SCORE_S = 30.0


def build_mirrors(mirrors: Path) -> set[str]:
    """One mirror per bundle (:func:`tests.repo_bundles.mirror_from_bundle`); base commits."""
    bundles = sorted((DATA / "contextbench" / "repos").glob("*.bundle"))
    return {mirror_from_bundle(bundle, mirrors)[1] for bundle in bundles}


def timed(label: str, fn, *args, **kwargs):  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    value = fn(*args, **kwargs)
    seconds = time.perf_counter() - started
    print(f"{label}: {seconds:.2f} s")
    return value, seconds


def main() -> int:
    home = Path(tempfile.mkdtemp(prefix="bench-bridge-"))
    try:
        return measure(home)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def measure(home: Path) -> int:
    """Everything of the module docstring in ``home``; the exit status."""
    settings = Settings(home=home, work_root=home / "work")
    ctx = local_admin_context(open_engine(settings), settings)
    commits = build_mirrors(home / "mirrors")
    release = DATA / "contextbench" / "contextbench_verified_test.parquet"
    rows, _ = load_contextbench(release)
    ids = [r["instance_id"] for r in rows if r["base_commit"] in commits]
    imports.import_benchmark(ctx, ImportRequest(benchmark="contextbench"), file=release)
    argv = [sys.executable, str(ROOT / "examples" / "harnesses" / "grep_localizer.py")]
    body = {
        "id": "grep-localizer",
        "version": "1.0.0",
        "kind": "command",
        "config": {"argv": argv, "timeout_s": 120},
    }
    harnesses.register_harness(ctx, harnesses.parse_harness(body))
    request = StartRunRequest(
        dataset="contextbench",
        harness="grep-localizer@1.0.0",
        settings=RunSettings(case_ids=ids, concurrency=4),
    )
    run, _ = timed(
        f"run of {len(ids)} bundled rows",
        run_execution.execute_run,
        ctx,
        runs.start_run(ctx, request).id,
    )
    export, _ = timed("export_localization_run", localization.export_localization_run, ctx, run.id)
    src = ROOT / "src"
    cmd = f"env PYTHONPATH={src}:{ROOT} {sys.executable} {STUB}"
    first, cold = timed(
        "score_localization_upstream (scorer cache cold)",
        localization.score_localization_upstream,
        ctx,
        run.id,
        cmd,
    )
    second, warm = timed(
        "score_localization_upstream (cache warm)",
        localization.score_localization_upstream,
        ctx,
        run.id,
        cmd,
    )
    card, _ = timed(
        "rescore_run localization (mirror, no harness)",
        scorecards.rescore_run,
        ctx,
        run.id,
        [GraderSpec(id="localization")],
    )
    preds, _ = timed("export_swebench_predictions", swe.export_swebench_predictions, ctx, run.id)
    own = scorecards.get_scorecard(ctx, run.scorecard_id or "")
    print(
        f"rows exported {len(export.gold)}, skipped {len(export.skipped)}, "
        f"warnings {len(export.warnings)}; predictions {len(preds.predictions)}"
    )
    print(f"scorer: {second.agreeing} agree, {second.differing} differ, error {second.error}")
    mean = own.metrics["localization"].mean
    print(f"line coverage mean: run {mean}, rescore {card.metrics['localization'].mean}")
    ok = (
        first.error is None
        and second.differing == 0
        and second.agreeing == len(ids)
        and own.metrics["localization"] == card.metrics["localization"]
        and max(cold, warm) <= TARGET_SCORE_S
    )
    if not ok:
        print(orjson.dumps(second.model_dump(mode="json"), option=orjson.OPT_INDENT_2).decode())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
