"""Code localization benchmarks: ``.venv/bin/python -m bench.localization``.

- **gold lines**: :func:`benchbook.datasets.gold.patch_lines` over the 300 SWE-bench Lite
  ``patch`` fields (files and changed line ranges, no repository) — target ≤ 2 s.

Reads ``BENCHBOOK_SHARED_DATA`` (default ``../shared/data``). Exits non-zero over a target.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from benchbook.datasets.gold import patch_lines

DATA = Path(
    os.environ.get("BENCHBOOK_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
TARGET_GOLD_S = 2.0


def bench_gold_lines() -> float:
    """Seconds to extract files and line ranges from the 300 SWE-bench Lite patches."""
    rows = json.loads((DATA / "swebench" / "swe-bench-lite-test.json").read_text())
    started = time.perf_counter()
    files = sum(len(patch_lines(r["patch"])) for r in rows)
    seconds = time.perf_counter() - started
    print(f"gold lines: {len(rows)} patches, {files} files in {seconds:.3f} s (target ≤ 2 s)")
    return seconds


def main() -> int:
    """Run every localization benchmark; 1 when one misses its target."""
    ok = bench_gold_lines() <= TARGET_GOLD_S
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
