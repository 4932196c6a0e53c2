"""SQLite writers of one process, queued or not: ``.venv/bin/python -m bench.sqlite_writers
[--threads 8] [--seconds 5] [--hold-ms 2] [--think-ms 1] [--rounds 1]``.

``--threads`` threads share one engine on one fresh SQLite file (WAL, as ``make_engine``
configures it) and each runs short write transactions back to back for ``--seconds`` seconds:
``INSERT`` a row, sleep ``--hold-ms`` (a request's work while its transaction is open),
``UPDATE`` a shared counter, commit, then pause ``--think-ms`` (its work outside the database).
Once with the writer queue (``store/sqlite_writers.py``: first come, first served) and once
with SQLite's busy handler alone (``make_engine(..., writer_queue=False)``: the losers sleep and
retry with back-off), alternating for ``--rounds`` rounds, each on its own file.

Prints per mode: transactions, refusals (Unavailable), latency of a transaction (begin to
commit) p50/p99/max in ms, and transactions/s.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path

from sqlalchemy import Engine, text

from benchbook.errors import Unavailable
from benchbook.store.engine import make_engine

INSERT = text("INSERT INTO t (thread, at) VALUES (:thread, :at)")
BUMP = text("UPDATE counter SET n = n + 1 WHERE id = 1")


def _setup(path: Path, queued: bool) -> Engine:
    engine = make_engine(f"sqlite:///{path}", 30.0, writer_queue=queued)
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE t (id INTEGER PRIMARY KEY, thread INTEGER, at REAL)")
        conn.exec_driver_sql("CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER)")
        conn.exec_driver_sql("INSERT INTO counter VALUES (1, 0)")
    return engine


def _writer(
    engine: Engine, thread: int, until: float, pauses_s: tuple[float, float], out: list[float],
    refused: list[int],
) -> None:  # fmt: skip
    hold_s, think_s = pauses_s
    while time.monotonic() < until:
        started = time.monotonic()
        try:
            with engine.begin() as conn:
                conn.execute(INSERT, {"thread": thread, "at": started})
                time.sleep(hold_s)
                conn.execute(BUMP)
        except Unavailable:
            refused.append(thread)
            continue
        out.append(time.monotonic() - started)
        time.sleep(think_s)


def measure(
    path: Path, queued: bool, threads: int, seconds: float, pauses_s: tuple[float, float]
) -> dict[str, float]:
    """One mode on a fresh file: ``{tx, refused, p50_ms, p99_ms, max_ms, tx_s}``."""
    engine = _setup(path, queued)
    latencies: list[float] = []
    refused: list[int] = []
    until = time.monotonic() + seconds
    workers = [
        threading.Thread(target=_writer, args=(engine, i, until, pauses_s, latencies, refused))
        for i in range(threads)
    ]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    engine.dispose()
    ms = sorted(x * 1000 for x in latencies)
    return {
        "tx": len(ms),
        "refused": len(refused),
        "p50_ms": statistics.median(ms),
        "p99_ms": ms[min(len(ms) - 1, int(len(ms) * 0.99))],
        "max_ms": ms[-1],
        "tx_s": len(ms) / seconds,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.sqlite_writers")
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--hold-ms", type=float, default=2.0)
    parser.add_argument("--think-ms", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args(argv)
    print(
        f"{args.threads} threads x {args.seconds:g} s, hold {args.hold_ms:g} ms, "
        f"think {args.think_ms:g} ms"
    )
    pauses_s = (args.hold_ms / 1000, args.think_ms / 1000)
    print(f"{'mode':<14}{'tx':>8}{'refused':>9}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}{'tx/s':>9}")
    with tempfile.TemporaryDirectory(prefix="bb-writers-") as tmp:
        for r in range(args.rounds):
            for queued in (True, False):
                name = "queue" if queued else "busy handler"
                path = Path(tmp) / f"{r}-{name.replace(' ', '-')}.db"
                m = measure(path, queued, args.threads, args.seconds, pauses_s)
                print(
                    f"{name:<14}{m['tx']:>8.0f}{m['refused']:>9.0f}{m['p50_ms']:>9.2f}"
                    f"{m['p99_ms']:>9.2f}{m['max_ms']:>9.2f}{m['tx_s']:>9.0f}"
                )


if __name__ == "__main__":
    main()
