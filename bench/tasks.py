"""Measured operations. Each runs inside its own child process (see ``bench.child``) and returns
a dict of numbers; seconds are wall-clock ``perf_counter`` time of the measured part only
(interpreter start, imports and migrations are excluded, peak RSS is not).
"""

from __future__ import annotations

import sqlite3
import statistics
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

BATCH = 2000


def raw_baseline(path: str, db: str) -> dict[str, Any]:
    """The bar: orjson-parse each line and insert it as JSON text into a one-table SQLite
    database, batched, in one transaction. No validation, no hashing, no canonical form."""
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("CREATE TABLE raw_rows (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
    t0 = time.perf_counter()
    n = 0
    conn.execute("BEGIN")
    batch: list[tuple[str]] = []
    with open(path, "rb") as f:
        for line in f:
            batch.append((orjson.dumps(orjson.loads(line)).decode(),))
            if len(batch) >= BATCH:
                conn.executemany("INSERT INTO raw_rows (body) VALUES (?)", batch)
                n += len(batch)
                batch.clear()
    conn.executemany("INSERT INTO raw_rows (body) VALUES (?)", batch)
    n += len(batch)
    conn.execute("COMMIT")
    secs = time.perf_counter() - t0
    conn.close()
    return {"rows": n, "seconds": secs}


def _context(url: str) -> Any:
    from benchbook.services.context import local_admin_context
    from benchbook.settings import Settings
    from benchbook.store.engine import make_engine, migrate

    engine = make_engine(url)
    migrate(engine)
    return local_admin_context(engine, Settings(database_url=url))


def import_file(url: str, path: str, dataset_id: str, version: str) -> dict[str, Any]:
    """Import a GSM8K-like JSONL file as ``dataset_id@version`` through the user's import path."""
    from bench.paths import importer

    ctx = _context(url)
    run = importer()
    t0 = time.perf_counter()
    result = run(ctx, Path(path), dataset_id, version)
    return {"seconds": time.perf_counter() - t0, **result}


def hash_only(path: str) -> dict[str, Any]:
    """Build every case of the file and hash it, storing nothing (the re-register bar)."""
    from bench.paths import case_hashes

    hashes = case_hashes(Path(path))
    t0 = time.perf_counter()
    n = sum(1 for _ in hashes)
    return {"rows": n, "seconds": time.perf_counter() - t0}


def diff(url: str, dataset_id: str, base: str, candidate: str) -> dict[str, Any]:
    """``diff_datasets`` of two stored versions."""
    from benchbook.services.datasets import diff_datasets

    ctx = _context(url)
    t0 = time.perf_counter()
    d = diff_datasets(ctx, dataset_id, base, candidate)
    secs = time.perf_counter() - t0
    s = d.summary
    return {
        "seconds": secs,
        "added": s.added,
        "removed": s.removed,
        "changed": s.changed,
        "unchanged": s.unchanged,
        "fields": sorted({fc.field for c in d.changed for fc in c.changes}),
    }


def deep_diff(url: str, dataset_id: str, base: str, candidate: str) -> dict[str, Any]:
    """A generic DeepDiff of the two versions' parsed cases (what the registry avoids)."""
    from deepdiff import DeepDiff  # type: ignore[import-not-found, unused-ignore]

    from benchbook.services.datasets import export_dataset

    ctx = _context(url)

    def cases(ref: str) -> list[Any]:
        return [orjson.loads(line) for line in export_dataset(ctx, dataset_id, ref)]

    t0 = time.perf_counter()
    d = DeepDiff(cases(base), cases(candidate))
    secs = time.perf_counter() - t0
    return {"seconds": secs, "changed_values": len(d.get("values_changed", {}))}


def _timed(fn: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return times[0], statistics.median(times), out


def first_page(url: str, dataset_id: str, version: str) -> dict[str, Any]:
    """``get_dataset`` first page of 50 cases: first call in the process and median of 20."""
    from benchbook.services.datasets import get_dataset

    ctx = _context(url)
    first, median, view = _timed(lambda: get_dataset(ctx, dataset_id, version, limit=50), 20)
    return {"first_s": first, "median_s": median, "cases": len(view.cases)}


def last_page(url: str, dataset_id: str, version: str, after: int) -> dict[str, Any]:
    """``get_dataset`` page of 50 cases deep in the version (keyset cursor ``after``)."""
    from benchbook.services.datasets import get_dataset

    ctx = _context(url)
    first, median, view = _timed(
        lambda: get_dataset(ctx, dataset_id, version, after=after, limit=50), 20
    )
    return {"first_s": first, "median_s": median, "cases": len(view.cases)}


def export(url: str, dataset_id: str, version: str) -> dict[str, Any]:
    """Stream ``export_dataset`` to nowhere, counting lines and bytes."""
    from benchbook.services.datasets import export_dataset

    ctx = _context(url)
    t0 = time.perf_counter()
    n = size = 0
    lines: Iterator[bytes] = export_dataset(ctx, dataset_id, version)
    for line in lines:
        n += 1
        size += len(line)
    return {"rows": n, "bytes": size, "seconds": time.perf_counter() - t0}


TASKS: dict[str, Callable[..., dict[str, Any]]] = {
    "raw": raw_baseline,
    "import": import_file,
    "hash": hash_only,
    "diff": diff,
    "deepdiff": deep_diff,
    "page": first_page,
    "deep_page": last_page,
    "export": export,
}
