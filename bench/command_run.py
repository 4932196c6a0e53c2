"""Command harness throughput: ``.venv/bin/python -m bench.command_run`` (``--help``).

Issue 32: a ``command`` harness run of ``/bin/true`` at concurrency 8 should reach at least
0.8x what a bare asyncio spawner does on the same machine in the same run. Measured in one
process, in alternating rounds (after one untimed warm-up round), each variant over ``--cases``
cases:

- **spawner, sandbox off / on**: ``asyncio.create_subprocess_exec`` of ``/bin/true`` —
  or of bwrap with the same arguments the sandbox builds around ``/bin/true`` (no limits) —
  ``--concurrency`` at once, stdin from ``/dev/null``, stdout and stderr piped and read to EOF,
  in a new session: the floor any runner that captures output pays;
- **run, <backend>, sandbox off / on**: a real Benchbook run (``start_run`` + ``execute_run``,
  local executor, concurrency 8, no graders) over a registered dataset of ``--cases`` prompt
  cases with the ``command`` harness ``["/bin/true"]``, on SQLite and on PostgreSQL (a throw-away
  database on ``BENCHBOOK_BENCH_DATABASE_URL`` or the local server, dropped after), with the
  settings' ``sandbox`` on and off (``BENCHBOOK_SANDBOX=off``: allowed here, the installation
  has a single admin — ``docs/security.md``).

Reported per variant: the median over rounds of cases/s and of CPU ms per case (user + system
of this process, all its threads, and its reaped children — bwrap and ``/bin/true`` included;
in brackets the event loop's thread alone, which every case waits on), the ratio of each run to
the spawner with the same sandbox setting (the median of the rounds' ratios: a round's two
measurements saw the same load), and the load average.
``--profile NAME`` runs that variant once more under cProfile (the event loop's thread, CPU
time). ``--only`` keeps the variants whose name contains one of its ``;``-separated parts.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import io
import os
import pstats
import resource
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.__main__ import _PG as PG
from bench.__main__ import _pg_admin_url, database

HARNESS = "bench-true"
DATASET = "true-cases"
TARGET_RATIO = 0.8


def _cpu_s() -> float:
    """User + system seconds of this process (all threads) and of its reaped children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _spawner(argv: list[str], n: int, concurrency: int) -> None:
    """``n`` runs of ``argv``, ``concurrency`` at once, output captured (the baseline)."""

    async def main() -> None:
        slots = asyncio.Semaphore(concurrency)

        async def one() -> None:
            async with slots:
                proc = await asyncio.create_subprocess_exec(
                    *argv,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                    start_new_session=True,
                )
                await proc.communicate()
                if proc.returncode != 0:
                    raise SystemExit(f"{argv[0]} exited {proc.returncode}")

        await asyncio.gather(*(one() for _ in range(n)))

    asyncio.run(main())


def _bwrap_true(work: Path) -> list[str]:
    """bwrap and the sandbox's arguments around ``/bin/true`` (what a case starts, minus the
    limits, which the runtime sets with ``prlimit(2)`` rather than a program)."""
    from benchbook.runtime.sandbox import SandboxPolicy, bwrap_argv

    cwd = work / "spawn"
    cwd.mkdir(exist_ok=True)
    policy = SandboxPolicy()
    full = bwrap_argv(["/bin/true"], policy=policy, cwd=cwd, writable=[cwd])
    return full[full.index(policy.bwrap) :]


def _context(url: str, home: Path, work_root: Path, sandbox: bool) -> Any:
    from benchbook.services.context import local_admin_context
    from benchbook.settings import Settings
    from benchbook.store.engine import make_engine, migrate

    engine = make_engine(url)
    migrate(engine)
    settings = Settings(database_url=url, home=home, work_root=work_root, sandbox=sandbox)
    return local_admin_context(engine, settings)


def _register(ctx: Any, n: int) -> None:
    """``DATASET@1.0.0`` with ``n`` prompt cases and the ``/bin/true`` command harness."""
    from bench.run_tasks import _prompt_rows
    from benchbook.contracts.harness import CommandHarness
    from benchbook.services.datasets import store_version
    from benchbook.services.harnesses import register_harness

    meta: dict[str, Any] = {"id": DATASET, "version": "1.0.0", "description": None}
    meta.update(tags=[], produced_by=None)
    store_version(ctx, DATASET, "1.0.0", meta, _prompt_rows(n))
    harness = {"id": HARNESS, "version": "1.0.0", "kind": "command"}
    harness["config"] = {"argv": ["/bin/true"]}  # type: ignore[assignment]
    register_harness(ctx, CommandHarness.model_validate(harness))


def _run(ctx: Any, n: int, concurrency: int) -> None:
    """One Benchbook run over the dataset; every case must end ``ok``."""
    from benchbook.contracts.run import RunSettings, StartRunRequest
    from benchbook.services.run_execution import execute_run
    from benchbook.services.runs import start_run

    request = StartRunRequest(
        dataset=DATASET,
        harness=HARNESS,
        graders=[],
        settings=RunSettings(concurrency=concurrency),
    )
    done = execute_run(ctx, start_run(ctx, request).id)
    counts = done.counts
    if done.status != "finished" or counts.done != n or counts.error:
        raise SystemExit(
            f"run {done.id}: {done.status}, {counts.done}/{n} done, {counts.error} errors"
        )


Variants = dict[str, Callable[[], None]]


def _variants(args: argparse.Namespace, tmp: Path, urls: dict[str, str]) -> Variants:
    n, c = args.cases, args.concurrency
    bwrap = _bwrap_true(tmp)
    variants: Variants = {
        "spawner, sandbox off": lambda: _spawner(["/bin/true"], n, c),
        "spawner, sandbox on": lambda: _spawner(bwrap, n, c),
    }
    for backend, url in urls.items():
        home = tmp / f"home-{backend}"
        for sandbox in (False, True):
            work_root = (args.work_root or tmp) / f"work-{backend}-{tmp.name}"
            ctx = _context(url, home, work_root, sandbox)
            if not sandbox:
                _register(ctx, n)
            name = f"run, {backend}, sandbox {'on' if sandbox else 'off'}"
            variants[name] = lambda ctx=ctx: _run(ctx, n, c)
    return variants


def _measure(variants: Variants, rounds: int, n: int) -> dict[str, dict[str, list[float]]]:
    """Per variant, cases/s and CPU ms per case of each timed round."""
    out = {name: {"rate": [], "cpu": [], "loop": []} for name in variants}
    for round_ in range(rounds + 1):
        for name, go in variants.items():
            t0, c0, l0 = time.perf_counter(), _cpu_s(), time.thread_time()
            go()
            secs, cpu = time.perf_counter() - t0, _cpu_s() - c0
            loop = time.thread_time() - l0
            if round_:  # round 0 warms up (the sandbox's /etc copy, caches, connections)
                out[name]["rate"].append(n / secs)
                out[name]["cpu"].append(1000 * cpu / n)
                out[name]["loop"].append(1000 * loop / n)
    return out


def _report(results: dict[str, dict[str, list[float]]], args: argparse.Namespace) -> None:
    print(
        f"{args.cases} cases x {args.rounds} rounds, concurrency {args.concurrency}"
        " (medians of rounds)"
    )
    rate = {name: statistics.median(r["rate"]) for name, r in results.items()}
    cpu = {name: statistics.median(r["cpu"]) for name, r in results.items()}
    loop = {name: statistics.median(r["loop"]) for name, r in results.items()}
    for name in results:
        rates = results[name]["rate"]
        line = f"  {name:<30} {rate[name]:8,.0f} cases/s (rounds {min(rates):,.0f}-"
        line += f"{max(rates):,.0f})  CPU {cpu[name]:5.2f} ms/case"
        line += f" (event loop {loop[name]:4.2f})"
        base = "spawner, sandbox " + name.rsplit(" ", 1)[1]
        if name.startswith("run, ") and base in rate:
            pairs = zip(results[name]["rate"], results[base]["rate"], strict=True)
            ratio = statistics.median(run / spawner for run, spawner in pairs)
            verdict = "ok" if ratio >= TARGET_RATIO else "MISSED"
            line += f"  {ratio:.2f}x spawner (target ≥{TARGET_RATIO}x {verdict})"
            line += f", CPU {cpu[name] - cpu[base]:+.2f} ms/case over it"
        print(line)


def main(argv: list[str] | None = None) -> None:
    """Parse options, measure every variant in alternating rounds, print the table."""
    p = argparse.ArgumentParser(prog="bench.command_run", description=__doc__.split("\n")[0])
    p.add_argument("--cases", type=int, default=500, help="cases per variant and round")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--backends", default="sqlite,postgresql")
    p.add_argument(
        "--work-root",
        type=Path,
        help="parent of the runs' BENCHBOOK_WORK_ROOT (default: the temporary directory, on the"
        " disk); /dev/shm puts the per-case directories on tmpfs",
    )
    p.add_argument("--only", default="", help="';'-separated variant-name parts to keep")
    p.add_argument("--profile", default="", help="cProfile the first variant whose name has this")
    args = p.parse_args(argv)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if "postgresql" in backends:
        PG[0] = _pg_admin_url()
        if PG[0] is None:
            backends.remove("postgresql")
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="benchbook-bench-command-") as tmp_name:
        tmp = Path(tmp_name)
        with contextlib.ExitStack() as stack:
            urls = {
                "SQLite" if b == "sqlite" else "PostgreSQL": stack.enter_context(
                    database(b, tmp, "command")
                )
                for b in backends
            }
            variants = _variants(args, tmp, urls)
            keep = [s.strip() for s in args.only.split(";") if s.strip()]
            if keep:
                variants = {k: v for k, v in variants.items() if any(s in k for s in keep)}
            results = _measure(variants, args.rounds, args.cases)
            _report(results, args)
            if args.profile:
                _profile(variants, args.profile)
        if args.work_root is not None:
            for root in args.work_root.glob(f"work-*-{tmp.name}"):
                shutil.rmtree(root, ignore_errors=True)
    print(
        "load average before: {:.2f} {:.2f} {:.2f}; after: {:.2f} {:.2f} {:.2f}".format(
            *load_before, *os.getloadavg()
        )
    )


def _profile(variants: Variants, name: str) -> None:
    chosen = next(k for k in variants if name in k)
    prof = cProfile.Profile(time.thread_time)  # CPU time of the event loop's thread
    prof.runcall(variants[chosen])
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf)
    stats.sort_stats("tottime").print_stats(25)
    stats.sort_stats("cumulative").print_stats("benchbook|spawner|sandbox", 60)
    print(f"\n=== cProfile of {chosen} ===\n{buf.getvalue()}")


if __name__ == "__main__":
    main()
