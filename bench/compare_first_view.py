"""The first view of a 100k-pair compare page in a fresh server process (issue 32: ≤ 300 ms
first byte).

``.venv/bin/python -m bench.compare_first_view [--cases N] [--rounds 3] [--tree NAME=SRC ...]``

Two finished 100k-case single-sample runs (``bench.compare.stored_pair``; 60% and 62% passing
at random, seeded) are stored in a SQLite file by each tree given (this tree's ``src`` and each
``--tree``, e.g. a checkout from before the change), as that tree stores a finished run (since
issue 32's second round: with each scorecard's verdict vector). Each round starts, per tree, a
fresh process with ``PYTHONPATH=SRC`` that builds the app (``create_app``) on its own copy of
its database and, through ``TestClient`` (in process, no network; the page is rendered whole
before its first byte):

- requests ``/api/health`` once (the app's first request: FastAPI's per-route state);
- waits ``--settle`` seconds in one of the two processes per tree and round (0 s in the other:
  the page asked for right after start-up, as before this option; what the server warms in
  the background at start-up is then still running);
- **first view**: ``/compare?baseline=…&candidate=…`` — the comparison computed in this
  process for the first time, with whatever it imports;
- **warm** (the named baseline): the same page again, median of 5 (the comparison reused).

One more process per round, **this tree on the oldest tree's database** (migrated: scorecards
without a stored vector, as after an upgrade), measures the first view that fills the vectors.
Prints medians over the rounds of the first view, of the warm page and their ratio, with the
load average.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
TARGET_MS = 300.0


def setup(url: str, home: str, n: int) -> dict[str, Any]:
    """Store the two runs; their scorecard ids."""
    from bench.compare import outcomes, stored_pair

    ctx, a, b, _ = stored_pair(url, Path(home), outcomes(n, 0.60, 1), outcomes(n, 0.62, 2))
    ctx.engine.dispose()
    return {"a": a, "b": b}


def view(url: str, home: str, a: str, b: str, settle: str = "0") -> dict[str, Any]:
    """First view (after ``settle`` s) and warm view of the compare page in this fresh
    process (ms)."""
    from fastapi.testclient import TestClient

    from benchbook.app import create_app
    from benchbook.settings import Settings

    app = create_app(Settings(home=Path(home), database_url=url))
    page = f"/compare?baseline={a}&candidate={b}"
    with TestClient(app) as client:
        assert client.get("/api/health").status_code == 200
        time.sleep(float(settle))
        started = time.perf_counter()
        assert client.get(page).status_code == 200
        first = (time.perf_counter() - started) * 1000
        warm = []
        for _ in range(5):
            started = time.perf_counter()
            assert client.get(page).status_code == 200
            warm.append((time.perf_counter() - started) * 1000)
    return {"first_ms": first, "warm_ms": statistics.median(warm)}


def _run(src: Path, *args: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "BENCHBOOK_HOME")}
    env["PYTHONPATH"] = f"{src}{os.pathsep}{ROOT}"
    cmd = [sys.executable, "-m", "bench.compare_first_view", "--child", *args]
    out = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True)
    if out.returncode != 0:
        raise SystemExit(f"{args[0]} failed:\n{out.stderr.decode()[-3000:]}")
    result: dict[str, Any] = orjson.loads(out.stdout.splitlines()[-1])
    return result


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        what, rest = argv[1], argv[2:]
        got = setup(rest[0], rest[1], int(rest[2])) if what == "setup" else view(*rest)
        print(orjson.dumps(got).decode())
        return 0
    p = argparse.ArgumentParser(prog="python -m bench.compare_first_view")
    p.add_argument("--cases", type=int, default=100_000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--tree", action="append", default=[], help="NAME=SRC of another tree")
    p.add_argument("--settle", type=float, default=2.0, help="s between start-up and view")
    opts = p.parse_args(argv)
    others = {t.split("=", 1)[0]: Path(t.split("=", 1)[1]).resolve() for t in opts.tree}
    trees = {"this": ROOT / "src"} | others
    oldest = next(iter(others.values()), ROOT / "src")
    settles = ("0", str(opts.settle))
    # (label, tree's src, the tree whose seed it opens, settle s)
    views = [
        (f"{tree}, settle {t} s", src, tree, t) for tree, src in trees.items() for t in settles
    ]
    if others:
        views.append((f"this on {next(iter(others))}'s db, settle {opts.settle} s",
                      ROOT / "src", next(iter(others)), str(opts.settle)))  # fmt: skip
    results: dict[str, list[dict[str, Any]]] = {label: [] for label, *_ in views}
    with tempfile.TemporaryDirectory(prefix="bb-first-view-") as tmp:
        ids = {}
        for tree, src in trees.items():
            seed = Path(tmp) / f"seed-{tree}.db"
            ids[tree] = _run(src, "setup", f"sqlite:///{seed}", tmp, str(opts.cases))
        for _ in range(opts.rounds):
            for n, (label, src, seeded, settle) in enumerate(views):
                home = Path(tmp) / f"home-{n}"
                shutil.rmtree(home, ignore_errors=True)
                home.mkdir()
                shutil.copy(Path(tmp) / f"seed-{seeded}.db", home / "benchbook.db")
                url = f"sqlite:///{home / 'benchbook.db'}"
                sides = (ids[seeded]["a"], ids[seeded]["b"])
                results[label].append(_run(src, "view", url, str(home), *sides, settle))
    print(f"sqlite, {opts.cases:,} pairs, {opts.rounds} alternating rounds (fresh process each);"
          f" load {os.getloadavg()}; oldest tree: {oldest}")  # fmt: skip
    for label, rs in results.items():
        first = statistics.median(r["first_ms"] for r in rs)
        warm = statistics.median(r["warm_ms"] for r in rs)
        verdict = "ok" if first <= TARGET_MS else "MISSED"
        print(f"  [{label}] first view {first:7.1f} ms   warm {warm:6.1f} ms   {first / warm:5.1f}x"
              f" warm (target first view ≤ {TARGET_MS:g} ms: {verdict})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
