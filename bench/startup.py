"""CLI start-up: ``.venv/bin/python -m bench.startup [--rounds N] [--before SRC]``.

Whole processes, wall clock, as a user types them (``benchbook`` is run as its console script
does: ``from benchbook.cli import app; app()``):

- **interpreter** (the anchor): ``python -c pass``;
- ``benchbook --version`` and ``benchbook --help``: target ≤ 0.25 s;
- **10k import, CLI**: ``benchbook import gsm8k --file F --id …`` into SQLite, a fresh process;
- ``benchbook datasets list --json`` right after it (the start-up of an everyday command, as the
  docs tests spawn ~300 of them; the list holds one dataset per round so far);
- **10k import, server**: the same file posted to ``POST /api/benchmarks/import`` (multipart) of
  a uvicorn server started once beforehand (its own SQLite database); target: CLI ≤ 2× server;
- three floors, to say what the target leaves for Benchbook's own code: **list libraries**, a
  bare process importing what ``datasets list`` cannot do without (:data:`COMMAND_LIBRARIES`);
  **libraries**, a bare
  process importing only the libraries the CLI import path runs on (:data:`LIBRARIES`:
  SQLAlchemy's engine for the store, pydantic for the contracts, pydantic-settings for the
  settings, typer for the CLI) — what any process running the shared service core pays before
  its first line of Benchbook; and **1-row import, CLI**, the same command on a one-row file (the
  fixed cost of an import command: start-up, database open, plan, commit). The report adds
  ``libraries + server import`` against the server, the least a CLI process running the same
  import code could take.

Every import reads its own file (the 10k GSM8K-like rows with a per-import prefix on every
question), so every import stores 10k new case bodies. The measurements run in alternating
rounds (one of each per round, after one untimed warm-up round) and the medians are reported,
each also as a ratio against the interpreter's median of the same run. ``--before SRC`` adds
the same CLI measurements with ``PYTHONPATH=SRC`` (e.g. an extracted older checkout's ``src``),
alternating with this tree's. ``CPU`` is the process's user + system time, steadier than wall
clock on a loaded machine (nan for the server's import: that CPU is spent in the server).
"""

from __future__ import annotations

import argparse
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import httpx
import orjson

from bench.gen import write_gsm8k_like

ROOT = Path(__file__).resolve().parents[1]
CLI = "import sys; from benchbook.cli import app; sys.argv[0] = 'benchbook'; sys.exit(app())"
SERVER = (
    "import sys, uvicorn; from benchbook.app import create_app; from benchbook.settings import "
    "Settings; uvicorn.run(create_app(Settings(home=sys.argv[1], run_worker=False)), "
    "host='127.0.0.1', port=int(sys.argv[2]), log_level='warning')"
)
#: The libraries a CLI import loads that no Benchbook code can avoid while the CLI runs the shared
#: service core (the store is SQLAlchemy Core, the contracts pydantic, the settings
#: pydantic-settings, the CLI typer).
LIBRARIES = "import sqlalchemy.engine, sqlalchemy.sql, pydantic, pydantic_settings, typer, orjson"
#: What ``datasets list --json`` cannot do without (issue 32 (d)): SQLAlchemy Core with the SQLite
#: driver and dialect, typer with rich, pydantic, orjson — its floor; the command's own share
#: is its time above this.
COMMAND_LIBRARIES = (
    "import sqlalchemy.engine, sqlalchemy.sql, sqlalchemy.dialects.sqlite, sqlite3, typer,"
    " rich.console, pydantic, orjson"
)
TARGET_STARTUP_S = 0.25
TARGET_IMPORT_RATIO = 2.0


#: Not passed on: a database or key of the caller's, and PYTHONDONTWRITEBYTECODE (without
#: bytecode caches every process would compile each module it imports from source again).
DROPPED = ("DATABASE_URL", "BENCHBOOK_API_KEY", "PYTHONDONTWRITEBYTECODE")


def _env(src: Path, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in DROPPED}
    return {**env, "PYTHONPATH": str(src), "BENCHBOOK_HOME": str(home), "COLUMNS": "100"}


#: CPU seconds (user + system) of the last process :func:`_timed_process` ran.
last_cpu = [0.0]


def _timed_process(args: list[str], env: dict[str, str], check: bool = True) -> float:
    """Wall seconds of one process (its CPU seconds go to :data:`last_cpu`). ``check=False``
    for the flags: a tree without ``--version`` answers "No such option" after the same
    start-up."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(args, env=env, check=check, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    last_cpu[0] = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall


def _salted(base: Path, out: Path, salt: str) -> Path:
    """``base`` with ``salt`` before every question: new content, same shape and size."""
    with base.open("rb") as src, out.open("wb") as dst:
        for line in src:
            row = orjson.loads(line)
            row["question"] = f"{salt} {row['question']}"
            dst.write(orjson.dumps(row) + b"\n")
    return out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait_for(url: str, proc: subprocess.Popen[bytes], timeout_s: float = 300.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited with {proc.returncode}")
        try:
            if httpx.get(url, timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise SystemExit(f"server at {url} did not answer within {timeout_s:.0f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.startup")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--before", type=Path, help="another tree's src, measured alternately")
    opts = parser.parse_args(argv)
    trees = {"this": ROOT / "src"} | ({"before": opts.before.resolve()} if opts.before else {})
    times: dict[str, list[float]] = {}

    cpu: dict[str, list[float]] = {}

    def record(name: str, fn: Callable[[], float]) -> None:
        last_cpu[0] = float("nan")  # the server's import: CPU of another process
        wall = fn()
        if n >= 0:  # round -1 warms up: bytecode caches, databases migrated, server's first call
            times.setdefault(name, []).append(wall)
            cpu.setdefault(name, []).append(last_cpu[0])

    with tempfile.TemporaryDirectory(prefix="bb-startup-") as tmp_dir:
        tmp = Path(tmp_dir)
        base = write_gsm8k_like(tmp / "base.jsonl", opts.rows)
        one_row = write_gsm8k_like(tmp / "one.jsonl", 1)
        port = _free_port()
        server_env = _env(ROOT / "src", tmp / "server-home")
        server = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(tmp / "server-home"), str(port)], env=server_env
        )
        api = f"http://127.0.0.1:{port}/api"
        try:
            _wait_for(f"{api}/health", server)
            for n in range(-1, opts.rounds):
                python = [sys.executable, "-c", "pass"]
                record("interpreter", partial(_timed_process, python, _env(ROOT, tmp)))
                libraries = [sys.executable, "-c", LIBRARIES]
                record("libraries (floor)", partial(_timed_process, libraries, _env(ROOT, tmp)))
                command = [sys.executable, "-c", COMMAND_LIBRARIES]
                record("list libraries (floor)", partial(_timed_process, command, _env(ROOT, tmp)))
                for tree, src in trees.items():
                    env = _env(src, tmp / f"home-{tree}")
                    for flag in ("--version", "--help"):
                        cmd = [sys.executable, "-c", CLI, flag]
                        record(f"{flag} [{tree}]", partial(_timed_process, cmd, env, check=False))
                    file = _salted(base, tmp / f"cli-{tree}-{n}.jsonl", f"cli-{tree}-{n}")
                    cmd = [sys.executable, "-c", CLI, "import", "gsm8k", "--file", str(file)]
                    cmd += ["--id", f"cli-{n}"]
                    record(f"import {opts.rows:,} CLI [{tree}]", partial(_timed_process, cmd, env))
                    one = _salted(one_row, tmp / f"one-{tree}-{n}.jsonl", f"one-{tree}-{n}")
                    cmd = [sys.executable, "-c", CLI, "import", "gsm8k", "--file", str(one)]
                    cmd += ["--id", f"one-{n}"]
                    record(f"import 1 CLI [{tree}]", partial(_timed_process, cmd, env))
                    cmd = [sys.executable, "-c", CLI, "datasets", "list", "--json"]
                    record(f"datasets list [{tree}]", partial(_timed_process, cmd, env))
                file = _salted(base, tmp / f"http-{n}.jsonl", f"http-{n}")
                record(f"import {opts.rows:,} server", partial(_post, api, file, f"http-{n}"))
        finally:
            server.terminate()
            server.wait(timeout=30)
    _report(times, cpu, opts.rounds, opts.rows)
    return 0


def _post(api: str, file: Path, dataset_id: str) -> float:
    request = orjson.dumps({"benchmark": "gsm8k", "id": dataset_id}).decode()
    started = time.perf_counter()
    with file.open("rb") as body:
        response = httpx.post(
            f"{api}/benchmarks/import",
            data={"request": request},
            files={"file": (file.name, body, "application/x-ndjson")},
            timeout=600.0,
        )
    elapsed = time.perf_counter() - started
    if response.status_code != 201:
        raise SystemExit(f"server import answered {response.status_code}: {response.text}")
    return elapsed


def _report(
    times: dict[str, list[float]], cpu: dict[str, list[float]], rounds: int, rows: int
) -> None:
    medians = {name: statistics.median(values) for name, values in times.items()}
    anchor = medians["interpreter"]
    server = medians[f"import {rows:,} server"]
    print(f"{rounds} alternating rounds, medians; load average {os.getloadavg()}")
    print(f"{'measurement':<28} {'wall':>8} {'min':>8} {'CPU':>8} {'x interp.':>10}  target")
    for name, values in times.items():
        target = ""
        if name.startswith("--"):
            verdict = "ok" if medians[name] <= TARGET_STARTUP_S else "MISSED"
            target = f"≤ {TARGET_STARTUP_S} s wall: {verdict}"
        elif name.startswith(f"import {rows:,} CLI"):
            ratio = medians[name] / server
            verdict = "ok" if ratio <= TARGET_IMPORT_RATIO else "MISSED"
            target = f"{ratio:.2f}x server (≤ {TARGET_IMPORT_RATIO}x: {verdict})"
        print(
            f"{name:<28} {medians[name]:>7.3f}s {min(values):>7.3f}s "
            f"{statistics.median(cpu[name]):>7.3f}s {medians[name] / anchor:>9.1f}x  {target}"
        )
    floor = medians["libraries (floor)"] + server
    print(
        f"{'libraries + server import':<28} {floor:>7.3f}s {'':>8} {'':>8} {floor / anchor:>9.1f}x"
        f"  {floor / server:.2f}x server: the least a CLI running the shared core could take"
    )


if __name__ == "__main__":
    sys.exit(main())
