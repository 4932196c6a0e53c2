"""Server time of the compare page for two 100k-case scorecards (issue 11: first byte ≤ 100 ms).

``.venv/bin/python -m bench.compare_page [--cases N] [--backends sqlite,postgresql]`` stores two
finished runs of N single-sample cases (baseline passing 60%, candidate 62% at random, seeded;
``bench.compare.stored_pair``), then requests ``/compare`` in-process through the ASGI app
(TestClient, no network, no browser; the page is rendered whole before its first byte, so the
first byte is the server time):

- **cold**: the comparison computed for the request (this process's comparison cache emptied
  first) — ``compare_scorecards`` itself, 10,000 bootstrap resamples, is the named baseline,
  timed the same way just before;
- **warm**: the same comparison again, filtered to regressions, and its second page (the cache
  holds comparisons of ended runs; what a user clicking the filters and pages gets).

Median and p95 of 20 requests (5 for cold). On PostgreSQL the tables are analyzed after the
load first (the test server runs with ``autovacuum = off``; see docs/web.md, Speed). Exits
non-zero when a warm page misses the target.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.__main__ import _PG as PG
from bench.__main__ import _pg_admin_url, database
from bench.compare import outcomes, stored_pair

TARGET_MS = 100.0


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """``(median ms, p95 ms)`` of ``repeat`` calls of ``fn``."""
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return statistics.median(samples), samples[max(0, int(len(samples) * 0.95) - 1)]


def bench_backend(url: str, home: Path, n: int) -> bool:
    """Print one line per measurement on the database ``url``; False when a target is missed."""
    from fastapi.testclient import TestClient

    from benchbook.app import create_app
    from benchbook.services.comparisons import compare_scorecards, forget_comparisons
    from benchbook.settings import Settings

    ctx, a, b, setup = stored_pair(url, home, outcomes(n, 0.60, 1), outcomes(n, 0.62, 2))
    print(f"  setup (register {n:,} cases, write two runs): {setup:.1f} s")
    if url.startswith("postgresql"):
        # what autovacuum does within a minute of a load; this test server runs without it
        with ctx.engine.begin() as conn:
            conn.exec_driver_sql("ANALYZE case_results, scorecard_scores, scorecards, runs")
    app = create_app(Settings(home=home, database_url=url))
    page = f"/compare?baseline={a}&candidate={b}"

    def service() -> None:
        forget_comparisons()
        compare_scorecards(ctx, a, b)

    ok = True
    with TestClient(app) as client:

        def get(path: str) -> Callable[[], None]:
            def call() -> None:
                response = client.get(path)
                assert response.status_code == 200, (path, response.status_code)

            return call

        def cold() -> None:
            forget_comparisons()
            get(page)()

        get(page)()  # warm the process: scipy, templates, connection pool
        median, p95 = timed(service, 5)
        print(f"  compare_scorecards (baseline)      median {median:7.1f} ms   p95 {p95:7.1f} ms")
        median, p95 = timed(cold, 5)
        print(f"  compare page, cold                 median {median:7.1f} ms   p95 {p95:7.1f} ms")
        cursor = client.get(page + "&show=still_passing").text.split("after=")[1].split('"')[0]
        for label, path in (
            ("compare page, warm", page),
            ("  filtered to regressions", page + "&show=regressed"),
            ("  second page of still passing", f"{page}&show=still_passing&after={cursor}"),
        ):
            median, p95 = timed(get(path), 20)
            hit = median <= TARGET_MS
            ok &= hit
            verdict = f"target ≤ {TARGET_MS:g} ms: {'ok' if hit else 'MISSED'}"
            print(f"  {label:32}  median {median:7.1f} ms   p95 {p95:7.1f} ms ({verdict})")
    app.state.engine.dispose()
    ctx.engine.dispose()
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.compare_page", description=__doc__)
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--backends", default="sqlite", help="sqlite,postgresql")
    args = parser.parse_args(argv)
    ok = True
    for backend in args.backends.split(","):
        if backend == "postgresql":
            PG[0] = _pg_admin_url()
            if PG[0] is None:
                print("postgresql: no server answers; skipped")
                continue
        print(f"{backend}, {args.cases:,} pairs:")
        with tempfile.TemporaryDirectory() as tmp, database(backend, Path(tmp), "cpage") as url:
            ok &= bench_backend(url, Path(tmp), args.cases)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
