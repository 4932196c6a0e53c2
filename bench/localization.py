"""Code localization benchmarks: ``.venv/bin/python -m bench.localization``.

- **gold lines**: :func:`benchbook.datasets.gold.patch_lines` over the 300 SWE-bench Lite
  ``patch`` fields (files and changed line ranges, no repository) — target ≤ 2 s.
- **metrics**: :func:`benchbook.eval.localization.score_instance` for the 50 ContextBench rows
  and their aggregate, checkouts ready (not timed): the eight rows whose repositories are bundled
  use a real checkout fetched from the bundle; the other 42 have no checkout here, so their
  files count as missing (file and line levels only). The prediction per row is its gold spans
  shifted by 3 lines plus one step per gold file, with the gold patch as the model patch
  — target ≤ 5 s.

Reads ``BENCHBOOK_SHARED_DATA`` (default ``../shared/data``). Exits non-zero over a target.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchbook.datasets.contextbench import load_contextbench
from benchbook.datasets.gold import patch_lines
from benchbook.eval.checkout import Checkout
from benchbook.eval.localization import Prediction, aggregate, score_instance

DATA = Path(
    os.environ.get("BENCHBOOK_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
TARGET_GOLD_S = 2.0
TARGET_METRICS_S = 5.0


def bench_gold_lines() -> float:
    """Seconds to extract files and line ranges from the 300 SWE-bench Lite patches."""
    rows = json.loads((DATA / "swebench" / "swe-bench-lite-test.json").read_text())
    started = time.perf_counter()
    files = sum(len(patch_lines(r["patch"])) for r in rows)
    seconds = time.perf_counter() - started
    print(f"gold lines: {len(rows)} patches, {files} files in {seconds:.3f} s (target ≤ 2 s)")
    return seconds


def _checkouts(root: Path) -> dict[str, Path]:
    """Base commit → checkout for every bundled repository (shallow fetch from the bundle)."""
    out = {}
    for bundle in sorted((DATA / "contextbench" / "repos").glob("*.bundle")):
        sha = subprocess.run(
            ["git", "bundle", "list-heads", str(bundle)], capture_output=True, text=True, check=True
        ).stdout.split()[0]
        repo = root / bundle.stem
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        (repo / ".git" / "shallow").write_text(sha + "\n")
        subprocess.run(["git", "-C", str(repo), "fetch", "-q", str(bundle), "main"], check=True)
        subprocess.run(
            ["git", "-C", str(repo), "-c", "advice.detachedHead=false", "checkout", "-q", sha],
            check=True,
        )
        out[sha] = repo
    return out


def _prediction(row: dict[str, Any]) -> Prediction:
    spans: dict[str, list[dict[str, int]]] = {}
    for s in row["gold_context"]:
        spans.setdefault(s["file"], []).append(
            {"start": s["start_line"] + 3, "end": s["end_line"] + 3}
        )
    steps = [{"files": [f], "spans": {f: v}} for f, v in spans.items()]
    return Prediction(files=list(spans), spans=spans, steps=steps, model_patch=row["patch"])


def bench_metrics() -> float:
    """Seconds to score the 50 ContextBench rows and aggregate them."""
    rows, _ = load_contextbench(DATA / "contextbench" / "contextbench_verified_test.parquet")
    with tempfile.TemporaryDirectory() as tmp:
        checkouts = _checkouts(Path(tmp))
        started = time.perf_counter()
        results = []
        for row in rows:
            repo = checkouts.get(row["base_commit"])
            checkout = Checkout.from_dir(repo) if repo else Checkout(lambda path: None)
            results.append(score_instance(row["gold_context"], _prediction(row), checkout))
        summary = aggregate(results)
        seconds = time.perf_counter() - started
    line, symbol = summary["micro"]["line"], summary["micro"]["symbol"]
    print(
        f"metrics: {len(rows)} rows ({len(checkouts)} with a checkout) in {seconds:.3f} s "
        f"(target ≤ 5 s); micro line coverage {line['coverage']:.3f}, "
        f"symbol coverage {symbol['coverage']:.3f}"
    )
    return seconds


def main() -> int:
    """Run every localization benchmark; 1 when one misses its target."""
    ok = bench_gold_lines() <= TARGET_GOLD_S
    ok = bench_metrics() <= TARGET_METRICS_S and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
