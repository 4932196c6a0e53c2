"""Run overhead benchmarks: ``.venv/bin/python -m bench.runs`` (``--help`` for the options).

Measures, each in a fresh child process (peak RSS = the child's ``VmHWM``), on SQLite and on
PostgreSQL (a throw-away database on ``BENCHBOOK_BENCH_DATABASE_URL`` or
``postgresql://postgres@127.0.0.1:5432/postgres``, dropped after):

- **python run**: ``start_run`` + ``execute_run`` of a constant ``python`` harness over a
  generated 10k-case prompt dataset ("What is i+1?"), ``numeric`` grader, concurrency 8 →
  cases/s and process CPU ms per case; against **executor only**, the same executor loop over
  the same cases with a sink that discards results (no run row, no writes, no scorecard).
- **command run**: ``/bin/echo {task}`` as a ``command`` harness over 1k cases, concurrency 8;
  against **spawn only**, ``/bin/echo`` spawned 1k times by asyncio subprocesses, 8 at once.
- **peak memory** of a 100k-case python run (the 100k registration is a separate child).

Dataset registration is never inside a timed run. Exits non-zero when a run does not finish
with every case done and no errors. ``--profile`` re-runs the 10k python run on SQLite under
cProfile and prints the top functions.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson

from bench.__main__ import _PG as PG
from bench.__main__ import ROOT, _pg_admin_url, database

TARGET_CASES_PER_S = 2000.0
TARGET_PEAK_MB = 300.0
PYTHON_HARNESS, COMMAND_HARNESS = "bench-constant", "bench-echo"


class Failed(Exception):
    """A child exited non-zero or a run did not finish cleanly."""


def spawn(home: Path, task: str, *args: Any, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run ``bench.run_tasks.TASKS[task](*args)`` in a child with ``BENCHBOOK_HOME=home``."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
        out = tmp.name
    child_env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "src")]),
        "BENCHBOOK_HOME": str(home),
        **(env or {}),
    }
    cmd = [sys.executable, "-m", "bench.run_child", task, out, orjson.dumps(args).decode()]
    try:
        proc = subprocess.run(cmd, cwd=ROOT, env=child_env, check=False)
        if proc.returncode != 0:
            raise Failed(f"bench task {task} failed (exit {proc.returncode})")
        result: dict[str, Any] = orjson.loads(Path(out).read_bytes())
    finally:
        Path(out).unlink(missing_ok=True)
    return result


def _ok(good: bool) -> str:
    return "ok" if good else "MISSED"


class Table:
    """Rows ``(measurement, backend, size, value, detail, target)``, printed like ``bench``."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, ...]] = []
        self.results: list[dict[str, Any]] = []
        self.failures: list[str] = []
        self.spawn_rate = 0.0  # cases/s of "spawn only", the command run's baseline
        self.memory_env: dict[str, str] = {}
        self.memory_note = ""

    def add(self, what: str, backend: str, n: int, value: str, detail: str, target: str) -> None:
        size = f"{n // 1000}k" if n >= 1000 else str(n)
        self.rows.append((what, backend, size, value, detail, target))

    def keep(self, what: str, backend: str, r: dict[str, Any]) -> None:
        self.results.append({"what": what, "backend": backend, **r})

    def check_run(self, what: str, backend: str, r: dict[str, Any]) -> None:
        """A run must finish with every case done and none errored."""
        if r["status"] != "finished" or r["cases"] != r["total"] or r["errors"]:
            self.failures.append(
                f"{what} on {backend}: status {r['status']}, {r['cases']}/{r['total']} done,"
                f" {r['errors']} errors"
            )

    def print(self) -> None:
        head = ("measurement", "backend", "size", "value", "detail", "target")
        widths = [max(len(row[i]) for row in [head, *self.rows]) for i in range(6)]
        for row in [head, tuple("-" * w for w in widths), *self.rows]:
            print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


def _rate(r: dict[str, Any]) -> float:
    return float(r["cases"]) / float(r["seconds"])


def _cpu_ms(r: dict[str, Any]) -> float:
    return 1000.0 * float(r["cpu_s"]) / float(r["cases"])


def overhead(t: Table, home: Path, backend: str, url: str, n: int, cmd_n: int) -> None:
    """Python run vs executor only; command run vs spawn only (spawn only: see ``main``)."""
    ds = f"prompts-{n // 1000}k"
    reg = spawn(home, "runs.register", url, ds, n)
    t.keep("register", backend, reg)
    t.add("register prompt dataset", backend, n, f"{reg['rows'] / reg['seconds']:,.0f} cases/s",
          f"{reg['seconds']:.2f} s (not in the runs)", "")  # fmt: skip
    roots: list[tuple[str, dict[str, str]]] = [("default work root", {})]
    if t.memory_env:  # the same pair with the per-case directories on tmpfs
        roots.append((f"work root {t.memory_env['BENCHBOOK_WORK_ROOT']}", t.memory_env))
    for label, env in roots:
        python_pair(t, home, backend, url, ds, n, label, env)
    c = spawn(home, "runs.run", url, ds, COMMAND_HARNESS, 8, cmd_n, False)
    t.keep("command_run", backend, c)
    t.check_run("command run", backend, c)
    ratio = _rate(c) / t.spawn_rate
    detail = f"{_cpu_ms(c):.2f} CPU ms/case, {ratio:.2f}x spawn only"
    t.add("command run, /bin/echo, c=8", backend, cmd_n, f"{_rate(c):,.0f} cases/s", detail, "")


def python_pair(
    t: Table, home: Path, backend: str, url: str, ds: str, n: int, label: str, env: dict[str, str]
) -> None:
    """Executor only (discard sink), then the python run, both with the same work root."""
    base = spawn(home, "runs.executor_only", url, ds, PYTHON_HARNESS, 8, None, env=env)
    t.keep("executor_only", backend, {**base, "work_root": label})
    t.add(f"executor only, discard sink, {label}", backend, n, f"{_rate(base):,.0f} cases/s",
          f"{_cpu_ms(base):.2f} CPU ms/case, peak {base['peak_mb']:.0f} MB", "")  # fmt: skip
    r = spawn(home, "runs.run", url, ds, PYTHON_HARNESS, 8, None, False, env=env)
    t.keep("python_run", backend, {**r, "work_root": label})
    t.check_run(f"python run ({label})", backend, r)
    t.add(f"python run, c=8, {label}", backend, n, f"{_rate(r):,.0f} cases/s",
          f"{_cpu_ms(r):.2f} CPU ms/case; {_rate(r) / _rate(base):.2f}x executor only"
          f" ({_cpu_ms(r) / _cpu_ms(base):.2f}x its CPU)",
          f"≥{TARGET_CASES_PER_S:,.0f}/s {_ok(_rate(r) >= TARGET_CASES_PER_S)}")  # fmt: skip


def memory(t: Table, home: Path, backend: str, url: str, n: int) -> None:
    """Register ``n`` cases (own child), then run the constant harness over them (peak RSS)."""
    ds = f"prompts-{n // 1000}k"
    reg = spawn(home, "runs.register", url, ds, n)
    t.keep("register", backend, reg)
    t.add("register prompt dataset", backend, n, f"{reg['rows'] / reg['seconds']:,.0f} cases/s",
          f"{reg['seconds']:.2f} s, peak {reg['peak_mb']:.0f} MB (separate child)", "")  # fmt: skip
    r = spawn(home, "runs.run", url, ds, PYTHON_HARNESS, 8, None, False, env=t.memory_env)
    t.keep("memory_run", backend, r)
    t.check_run("100k run", backend, r)
    t.add("python run peak RSS", backend, n, f"{r['peak_mb']:.0f} MB",
          f"{_rate(r):,.0f} cases/s, {_cpu_ms(r):.2f} CPU ms/case{t.memory_note}",
          f"≤{TARGET_PEAK_MB:.0f} MB {_ok(r['peak_mb'] <= TARGET_PEAK_MB)}")  # fmt: skip


def _size(text: str) -> int:
    text = text.strip().lower()
    mult = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    return int(float(text.rstrip("km")) * mult)


def main(argv: list[str] | None = None) -> int:
    """Parse options, run every measurement, print the table; 1 when a run failed."""
    p = argparse.ArgumentParser(prog="bench.runs", description=__doc__.split("\n")[0])
    p.add_argument("--backends", default="sqlite,postgresql")
    p.add_argument("--cases", default="10k", help="cases of the overhead run")
    p.add_argument("--command-cases", default="1k", help="cases of the command run")
    p.add_argument("--memory-cases", default="100k", help="cases of the peak-memory run (0: skip)")
    p.add_argument(
        "--memory-work-root",
        default="/dev/shm",
        help="BENCHBOOK_WORK_ROOT of the peak-memory run and of an extra 'python run' row ('' ="
        " skip the row, default root for the memory run); tmpfs keeps the per-case directories"
        " off the disk",
    )
    p.add_argument("--profile", action="store_true", help="cProfile the SQLite python run")
    p.add_argument("--json", type=Path, help="also write the results as JSON here")
    args = p.parse_args(argv)
    n, cmd_n, mem_n = _size(args.cases), _size(args.command_cases), _size(args.memory_cases)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if "postgresql" in backends:
        PG[0] = _pg_admin_url()
        if PG[0] is None:
            backends.remove("postgresql")
    t = Table()
    work_root = args.memory_work_root
    t.memory_env = {"BENCHBOOK_WORK_ROOT": work_root} if work_root else {}
    t.memory_note = f", work root {work_root}" if work_root else ""
    with tempfile.TemporaryDirectory(prefix="benchbook-bench-runs-") as tmp:
        home = Path(tmp) / "home"
        try:
            echo = spawn(home, "runs.echo", cmd_n, 8)
            t.keep("spawn_only", "-", echo)
            t.spawn_rate = _rate(echo)
            t.add("spawn only, /bin/echo, c=8", "-", cmd_n, f"{_rate(echo):,.0f} cases/s",
                  f"{_cpu_ms(echo):.2f} CPU ms/case", "")  # fmt: skip
            for backend in backends:
                with database(backend, Path(tmp), "runs") as url:
                    overhead(t, home, backend, url, n, cmd_n)
                    if args.profile and backend == "sqlite":
                        ds = f"prompts-{n // 1000}k"
                        r = spawn(home, "runs.run", url, ds, PYTHON_HARNESS, 8, None, True)
                        print(f"\n=== cProfile of the {n:,}-case python run (SQLite) ===")
                        print(r["profile"])
                if mem_n:
                    with database(backend, Path(tmp), "runsmem") as url:
                        memory(t, home, backend, url, mem_n)
        except Failed as exc:
            t.failures.append(str(exc))
    print()
    t.print()
    if args.json:
        args.json.write_bytes(orjson.dumps(t.results, option=orjson.OPT_INDENT_2))
    for f in t.failures:
        print(f"FAILED: {f}", file=sys.stderr)
    return 1 if t.failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
