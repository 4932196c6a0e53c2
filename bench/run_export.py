"""Peak memory of exporting a 100k-case run: ``.venv/bin/python -m bench.run_export``.

A child registers a generated 100k-case prompt dataset and runs the constant ``python``
harness on it (not measured). Then the real command ``benchbook runs export RUN --format F -o
FILE`` runs once per format (JSONL, CSV, Parquet) as its own process, and its peak RSS is read
from ``wait4`` (the kernel's ``ru_maxrss`` of that process alone). ``benchbook runs list``
stands beside them as the floor: the interpreter and the CLI's imports. Exits non-zero when a
file does not hold one row per (case, sample) or a peak passes :data:`TARGET_PEAK_MB`.

Options: ``--cases N`` (default 100,000), ``--backend sqlite|postgresql``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.__main__ import ROOT, database

TARGET_PEAK_MB = 200.0
FORMATS = ("jsonl", "csv", "parquet")


def setup(url: str, n: int) -> str:
    """Register ``n`` cases and run the constant harness over them; the run id."""
    from bench.run_tasks import PYTHON_HARNESS, register
    from bench.tasks import _context
    from benchbook.contracts.run import RunSettings, StartRunRequest
    from benchbook.services import run_execution, runs

    register(url, "export-bench", n)
    ctx = _context(url)
    request = StartRunRequest(
        dataset="export-bench",
        harness=f"{PYTHON_HARNESS}@1.0.0",
        settings=RunSettings(concurrency=8),
    )
    run = run_execution.execute_run(ctx, runs.start_run(ctx, request).id)
    if run.status != "finished" or run.counts.done != n:
        raise SystemExit(f"setup run ended {run.status} with {run.counts.done} of {n} done")
    return run.id


def measure(env: dict[str, str], *args: str) -> tuple[float, float]:
    """``(peak RSS in MB, seconds)`` of ``benchbook ARGS`` as its own process."""
    benchbook = Path(sys.executable).parent / "benchbook"
    t0 = time.perf_counter()
    proc = subprocess.Popen([str(benchbook), *args], env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"benchbook {' '.join(args)} exited {proc.returncode}")
    return usage.ru_maxrss / 1024, time.perf_counter() - t0


def rows_in(path: Path, format: str) -> int:
    """Rows in an exported file (CSV: lines without the header; answers hold no newline)."""
    if format == "parquet":
        import pyarrow.parquet as pq

        return int(pq.ParquetFile(path).metadata.num_rows)
    with path.open("rb") as f:
        lines = sum(1 for _ in f)
    return lines - (1 if format == "csv" else 0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--setup", nargs=2, help=argparse.SUPPRESS)  # internal: URL N
    args = parser.parse_args(argv)
    if args.setup:
        print(setup(args.setup[0], int(args.setup[1])))
        return 0
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        with database_url(args.backend, work) as url:
            env = {
                **os.environ,
                "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "src")]),
                "BENCHBOOK_HOME": str(work / "home"),
                "DATABASE_URL": url,
            }
            cmd = [sys.executable, "-m", "bench.run_export", "--setup", url, str(args.cases)]
            t0 = time.perf_counter()
            made = subprocess.run(cmd, env=env, cwd=ROOT, check=True, capture_output=True)
            run_id = made.stdout.decode().split()[-1]
            print(
                f"{args.backend}: {args.cases:,}-case run {run_id} ready in "
                f"{time.perf_counter() - t0:.0f} s (not measured)"
            )
            floor, _ = measure(env, "runs", "list")
            print(f"  benchbook runs list (floor)         peak {floor:6.1f} MB")
            for fmt in FORMATS:
                out = work / f"run.{fmt}"
                peak, secs = measure(env, "runs", "export", run_id, "--format", fmt, "-o", str(out))
                rows = rows_in(out, fmt)
                mb = out.stat().st_size / 2**20
                ok = rows == args.cases and peak <= TARGET_PEAK_MB
                failed |= not ok
                print(
                    f"  benchbook runs export --format {fmt:<7} peak {peak:6.1f} MB, "
                    f"{secs:5.1f} s, {rows:,} rows, {mb:.1f} MB file{'' if ok else '  FAILED'}"
                )
    return 1 if failed else 0


def database_url(backend: str, work: Path) -> Any:
    """A fresh database for the bench (:func:`bench.__main__.database`)."""
    return database(backend, work, "run-export")


if __name__ == "__main__":
    raise SystemExit(main())
