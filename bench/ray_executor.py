"""The ``ray`` executor against the local one: ``.venv/bin/python -m bench.ray_executor``.

Starts real local Ray clusters (``ray start --head`` with its own temp dir and ports, as many
logical CPUs as the machine has cores, ``RAY_worker_niceness=0``; each stopped after its part)
and runs, through the services as ``benchbook run`` does, on SQLite in a temporary home. Each
part times three things, interleaved, ``--rounds`` times (default 2; the fastest of each
counts: the load of a shared machine drifts):

- **local**: the local executor;
- **raw ray**: plain Ray tasks doing the same work, ``concurrency`` in flight (``ray.wait``) —
  Ray's own floor on this machine, without Benchbook;
- **ray**: the ``ray`` executor.

Parts:

- **sleep**: ``--sleep-cases`` N (default 10,000) prompt cases, an async python harness
  sleeping 50 ms, concurrency C = 32 for all three. The cases declare no CPUs, so each Ray
  task asks for cores / 32 CPU (the executor's default) and 32 run at once, as locally. Ideal
  wall time ``T_ideal = N × 50 ms / C``. Reported: cases/s of each and the **per-case
  overhead** ``(T − T_ideal) / N`` (wall time a case adds to the run; target for ray ≤ 5 ms),
  with the same for Ray over raw Ray tasks, ``(T_ray − T_raw) / N``: what Benchbook adds.
- **cpu**: ``--cpu-cases`` M (default 2,000) cases of a pure-Python loop calibrated to
  ~100 ms of CPU here, declaring ``cpu_millicores: 1000`` (a whole CPU per Ray task),
  concurrency 2: local (a sync harness runs in threads of one process: one GIL, one core) vs
  Ray on the 2-CPU cluster (two worker processes). Reported: the speed-ups over local (target
  ≥ 1.7× on 2 cores) of raw Ray and of the executor.

Every run must finish with every case ``ok`` (exit 1 otherwise). The machine's load is printed
with the numbers: on a shared machine all three compete with other work.
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

from bench.ray_harnesses import raw_sleep_50ms, raw_spin, spin_steps
from benchbook.contracts.dataset import Dataset
from benchbook.contracts.run import Run, RunSettings, StartRunRequest
from benchbook.services import datasets as ds
from benchbook.services import harnesses, run_execution, runs
from benchbook.services.context import Context, local_admin_context
from benchbook.settings import Settings
from benchbook.store.engine import make_engine, migrate

SLOTS = 32


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


def _best_of(rounds: int, *timers: Callable[[], float]) -> list[float]:
    """The fastest of ``rounds`` interleaved timings of each timer (the load drifts)."""
    times = [[timer() for timer in timers] for _ in range(rounds)]
    return [min(column) for column in zip(*times, strict=True)]


def _raw_ray(function: Callable[..., object], n: int, in_flight: int, num_cpus: float,
             *args: object) -> float:  # fmt: skip
    """Seconds for ``n`` plain Ray tasks of ``function(*args)``, ``in_flight`` at a time."""
    import ray

    remote = ray.remote(function).options(num_cpus=num_cpus)
    started = time.perf_counter()
    pending = [remote.remote(*args) for _ in range(min(n, in_flight))]
    submitted = len(pending)
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        ray.get(ready)
        while submitted < n and len(pending) < in_flight:
            pending.append(remote.remote(*args))
            submitted += 1
    return time.perf_counter() - started


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


def _line(name: str, n: int, seconds: float, ideal: float) -> str:
    return (
        f"  {name:<13}{n / seconds:7,.0f} cases/s ({seconds:.1f} s), "
        f"(T − T_ideal)/N = {1000 * (seconds - ideal) / n:.2f} ms a case"
    )


def sleep_part(ctx: Context, n: int, rounds: int) -> float:
    """Local vs raw Ray vs the ray executor, 50 ms async sleeps at concurrency 32; returns the
    ray executor's per-case overhead (ms)."""
    _dataset(ctx, "sleeps", n, "sleep", None)
    sleeper = _harness(ctx, "sleep_50ms")
    cores = os.cpu_count() or 2
    task_cpus = round(cores / SLOTS, 4) if cores < SLOTS else 1.0
    cluster = _on_cluster(cores)
    try:
        on_ray = {"executor": "ray", "ray_address": cluster.address, "concurrency": SLOTS}
        _timed(ctx, "sleeps", sleeper, **on_ray, limit=SLOTS * 8)  # warm-up: worker processes
        t_local, t_raw, t_ray = _best_of(
            rounds,
            lambda: _timed(ctx, "sleeps", sleeper, concurrency=SLOTS)[1],
            lambda: _raw_ray(raw_sleep_50ms, n, SLOTS, task_cpus),
            lambda: _timed(ctx, "sleeps", sleeper, **on_ray)[1],
        )
    finally:
        _off(cluster)
    ideal = n * 0.05 / SLOTS
    added_ms = 1000 * (t_ray - ideal) / n
    print(f"sleep 50 ms × {n:,}, concurrency {SLOTS}, {cores} CPUs ({task_cpus:g} CPU a Ray "
          f"task); T_ideal = N × 50 ms / {SLOTS} = {ideal:.1f} s:")  # fmt: skip
    print(_line("local", n, t_local, ideal))
    print(_line("raw ray", n, t_raw, ideal))
    print(_line("ray executor", n, t_ray, ideal))
    verdict = "ok" if added_ms <= 5 else "MISSED"
    print(f"  ray executor: {added_ms:.2f} ms a case (target ≤ 5 ms: {verdict}); "
          f"over raw Ray tasks (T_ray − T_raw)/N = {1000 * (t_ray - t_raw) / n:.2f} ms, "
          f"over local (T_ray − T_local)/N = {1000 * (t_ray - t_local) / n:.2f} ms",
          flush=True)  # fmt: skip
    return added_ms


def cpu_part(ctx: Context, m: int, rounds: int) -> float:
    """Local vs raw Ray vs the ray executor with two worker processes (a 2-CPU cluster),
    CPU-bound cases declaring a whole CPU; returns the executor's speed-up over local."""
    steps = spin_steps(0.1)
    _dataset(ctx, "spins", m, f"spin {steps}", 1000)
    spinner = _harness(ctx, "spin")
    cluster = _on_cluster(2)
    try:
        on_ray = {"executor": "ray", "ray_address": cluster.address, "concurrency": 2}
        _timed(ctx, "spins", spinner, **on_ray, limit=4)  # warm-up
        c_local, c_raw, c_ray = _best_of(
            rounds,
            lambda: _timed(ctx, "spins", spinner, concurrency=2)[1],
            lambda: _raw_ray(raw_spin, m, 2, 1.0, steps),
            lambda: _timed(ctx, "spins", spinner, **on_ray)[1],
        )
    finally:
        _off(cluster)
    speedup = c_local / c_ray
    print(f"cpu ~100 ms ({steps:,} steps) × {m:,}, concurrency 2, 1 CPU a Ray task:")
    print(f"  local (threads, one GIL) {m / c_local:,.1f} cases/s ({c_local:.1f} s)")
    print(f"  raw ray, 2 workers       {m / c_raw:,.1f} cases/s ({c_raw:.1f} s): "
          f"{c_local / c_raw:.2f}x")  # fmt: skip
    print(f"  ray executor, 2 workers  {m / c_ray:,.1f} cases/s ({c_ray:.1f} s): "
          f"{speedup:.2f}x (target ≥ 1.7x: {'ok' if speedup >= 1.7 else 'MISSED'})")  # fmt: skip
    return speedup


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sleep-cases", type=int, default=10_000)
    parser.add_argument("--cpu-cases", type=int, default=2_000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}, {os.cpu_count()} cores", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        ctx = _context(Path(tmp))
        if args.sleep_cases:
            sleep_part(ctx, args.sleep_cases, args.rounds)
        if args.cpu_cases:
            cpu_part(ctx, args.cpu_cases, args.rounds)
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
