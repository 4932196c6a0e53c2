"""The ``ray`` executor against the local one: ``.venv/bin/python -m bench.ray_executor``.

Starts real local Ray clusters (``ray start --head`` with its own temp dir and ports; 32
logical CPUs for the first pair, 2 for the second; each stopped after its pair) and runs,
through the services as ``benchbook run`` does, on SQLite
in a temporary home:

- **sleep**: ``--sleep-cases`` (default 10,000) prompt cases, an async python harness sleeping
  50 ms: the local executor at concurrency 32, then Ray at concurrency 32 (32 tasks in flight,
  one logical CPU each). Reported: cases/s of both, and the time Ray adds a case,
  ``(T_ray − T_local) × 32 / N`` (32 slots busy for the extra wall time; target ≤ 5 ms).
- **cpu**: ``--cpu-cases`` (default 2,000) cases of a pure-Python loop calibrated to ~100 ms
  here: local at concurrency 2 (threads under one GIL) vs Ray at concurrency 2 on the 2-CPU
  cluster (two worker processes). Reported: the speed-up (target ≥ 1.7× on 2 cores).

Local and Ray runs alternate, twice, and the fastest of each counts (the load of a shared
machine drifts). Every run must finish with every case ``ok`` (exit 1 otherwise). The
machine's load is printed with the numbers: on a shared machine both compete with other work.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tests.raycluster import RayCluster

from bench.ray_harnesses import spin_steps
from benchbook.contracts.dataset import Dataset
from benchbook.contracts.run import Run, RunSettings, StartRunRequest
from benchbook.services import datasets as ds
from benchbook.services import harnesses, run_execution, runs
from benchbook.services.context import Context, local_admin_context
from benchbook.settings import Settings
from benchbook.store.engine import make_engine, migrate

SLOTS = 32
ROUNDS = 2


def _context(home: Path) -> Context:
    url = f"sqlite:///{home / 'bench.db'}"
    engine = make_engine(url)
    migrate(engine)
    settings = Settings(home=home, database_url=url, work_root=home / "work")
    return local_admin_context(engine, settings)


def _dataset(ctx: Context, dataset_id: str, n: int, task: str, cpu_millicores: int | None) -> None:
    resources = {"cpu_millicores": cpu_millicores} if cpu_millicores else None
    cases = [
        {"id": f"c{i}", "env": {"kind": "prompt"}, "task": task, "expected": "x",
         "graders": [{"id": "regex", "config": {"pattern": "."}}], "resources": resources}
        for i in range(n)
    ]  # fmt: skip
    ds.register_dataset(
        ctx, Dataset.model_validate({"id": dataset_id, "version": "1.0.0", "cases": cases})
    )


def _harness(ctx: Context, function: str) -> str:
    body = {
        "id": function.replace("_", "-"),
        "version": "1.0.0",
        "kind": "python",
        "config": {"callable": f"bench.ray_harnesses:{function}"},
    }
    harnesses.register_harness(ctx, harnesses.parse_harness(body))
    return f"{body['id']}@1.0.0"


def _timed(ctx: Context, dataset: str, harness: str, **settings: object) -> tuple[Run, float]:
    request = StartRunRequest(
        dataset=dataset, harness=harness, settings=RunSettings.model_validate(settings)
    )
    run = runs.start_run(ctx, request)
    started = time.perf_counter()
    done = run_execution.execute_run(ctx, run.id)
    seconds = time.perf_counter() - started
    if done.status != "finished" or done.counts.ok != done.counts.total:
        raise SystemExit(f"run {done.id}: {done.status}, {done.counts}, {done.top_errors}")
    return done, seconds


def _best_of(
    rounds: int, local: Callable[[], float], on_ray: Callable[[], float]
) -> tuple[float, float]:
    """The fastest of ``rounds`` interleaved timings of each (the machine's load drifts)."""
    times = [(local(), on_ray()) for _ in range(rounds)]
    return min(t[0] for t in times), min(t[1] for t in times)


def _on_cluster(cpus: int) -> RayCluster:
    import ray

    cluster = RayCluster.start(head_cpus=cpus)
    ray.init(address=cluster.address, log_to_driver=False)
    print(f"cluster of {cpus} CPUs up; load average {os.getloadavg()}", flush=True)
    return cluster


def _off(cluster: RayCluster) -> None:
    import ray

    ray.shutdown()
    cluster.stop()


def sleep_pair(ctx: Context, n: int) -> float:
    """Local vs Ray, 50 ms async sleeps at concurrency 32; returns the ms Ray adds a case."""
    _dataset(ctx, "sleeps", n, "sleep", None)
    sleeper = _harness(ctx, "sleep_50ms")
    cluster = _on_cluster(SLOTS)
    try:
        on_ray = {"executor": "ray", "ray_address": cluster.address, "concurrency": SLOTS}
        _timed(ctx, "sleeps", sleeper, **on_ray, limit=SLOTS * 8)  # warm-up: worker processes
        t_local, t_ray = _best_of(
            ROUNDS,
            lambda: _timed(ctx, "sleeps", sleeper, concurrency=SLOTS)[1],
            lambda: _timed(ctx, "sleeps", sleeper, **on_ray)[1],
        )
    finally:
        _off(cluster)
    added_ms = 1000 * (t_ray - t_local) * SLOTS / n
    print(f"sleep 50 ms × {n:,}, concurrency {SLOTS} (ideal {n * 0.05 / SLOTS:.1f} s):")
    print(f"  local {n / t_local:,.0f} cases/s ({t_local:.1f} s)")
    print(f"  ray   {n / t_ray:,.0f} cases/s ({t_ray:.1f} s)")
    verdict = "ok" if added_ms <= 5 else "MISSED"
    print(f"  ray adds {added_ms:.2f} ms a case (target ≤ 5 ms: {verdict})", flush=True)
    return added_ms


def cpu_pair(ctx: Context, m: int) -> float:
    """Local vs Ray with two worker processes (a 2-CPU cluster); returns the speed-up."""
    steps = spin_steps(0.1)
    _dataset(ctx, "spins", m, f"spin {steps}", None)
    spinner = _harness(ctx, "spin")
    cluster = _on_cluster(2)
    try:
        on_ray = {"executor": "ray", "ray_address": cluster.address, "concurrency": 2}
        _timed(ctx, "spins", spinner, **on_ray, limit=4)  # warm-up
        c_local, c_ray = _best_of(
            ROUNDS,
            lambda: _timed(ctx, "spins", spinner, concurrency=2)[1],
            lambda: _timed(ctx, "spins", spinner, **on_ray)[1],
        )
    finally:
        _off(cluster)
    speedup = c_local / c_ray
    print(f"cpu ~100 ms ({steps:,} steps) × {m:,}:")
    print(f"  local {m / c_local:,.1f} cases/s ({c_local:.1f} s)")
    print(f"  ray, 2 worker processes {m / c_ray:,.1f} cases/s ({c_ray:.1f} s)")
    print(f"  speed-up {speedup:.2f}x (target ≥ 1.7x: {'ok' if speedup >= 1.7 else 'MISSED'})")
    return speedup


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sleep-cases", type=int, default=10_000)
    parser.add_argument("--cpu-cases", type=int, default=2_000)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}, {os.cpu_count()} cores", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        ctx = _context(Path(tmp))
        if args.sleep_cases:
            sleep_pair(ctx, args.sleep_cases)
        if args.cpu_cases:
            cpu_pair(ctx, args.cpu_cases)
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
