"""Benchbook benchmarks: ``.venv/bin/python -m bench`` (or ``bench/run``).

Sizes default to 10k and 100k rows; ``--full`` adds 1M. SQLite always runs; PostgreSQL runs when
``BENCHBOOK_BENCH_DATABASE_URL`` (a server URL whose database is used to create and drop
throw-away databases) or the default local server ``postgresql://postgres@127.0.0.1:5432/postgres``
answers. Every measurement runs in a fresh child process whose peak RSS is reported (MB).
Generated files and databases live in a temporary folder that is removed afterwards.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from bench.gen import write_gsm8k_like
from bench.paths import path_name
from bench.report import Report

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PG = "postgresql://postgres@127.0.0.1:5432/postgres"
DATASET = "gsm8k-bench"


def spawn(task: str, *args: Any) -> dict[str, Any]:
    """Run ``bench.tasks.TASKS[task](*args)`` in a child; the result has ``peak_mb``."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
        out = tmp.name
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "src")])}
    cmd = [sys.executable, "-m", "bench.child", task, out, orjson.dumps(args).decode()]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env)
    proc.wait()
    try:
        if proc.returncode != 0:
            raise SystemExit(f"bench task {task} failed (exit {proc.returncode})")
        result: dict[str, Any] = orjson.loads(Path(out).read_bytes())
    finally:
        Path(out).unlink(missing_ok=True)
    return result


def _pg_admin_url() -> str | None:
    from sqlalchemy import create_engine, text

    from benchbook.store.engine import normalize_url

    url = normalize_url(os.environ.get("BENCHBOOK_BENCH_DATABASE_URL", DEFAULT_PG))
    try:
        with create_engine(url).connect() as conn:
            conn.execute(text("SELECT 1"))
    except Exception as exc:
        print(f"PostgreSQL not reachable at {url} ({type(exc).__name__}); skipping it")
        return None
    return url


@contextmanager
def database(backend: str, workdir: Path, label: str) -> Iterator[str]:
    """A fresh database URL for one size: a SQLite file, or a PostgreSQL database dropped after."""
    if backend == "sqlite":
        yield f"sqlite:///{workdir / f'bench-{label}.db'}"
        return
    from sqlalchemy import create_engine, text

    admin_url = _PG[0]
    assert admin_url is not None
    name = f"bb_bench_{label}_{uuid.uuid4().hex[:8]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield admin_url.rsplit("/", 1)[0] + "/" + name
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


_PG: list[str | None] = [None]


def _size(text: str) -> int:
    text = text.strip().lower()
    mult = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    return int(float(text.rstrip("km")) * mult)


def _label(n: int) -> str:
    return f"{n // 1_000_000}M" if n >= 1_000_000 else f"{n // 1000}k"


def best(runs: list[dict[str, Any]], key: str = "seconds") -> dict[str, Any]:
    """The fastest of repeated runs (the machine is shared; noise only ever adds time)."""
    return min(runs, key=lambda r: float(r[key]))


def run_size(rep: Report, backend: str, n: int, files: dict[str, Path], args: Any) -> None:
    """Import ``n`` rows; at the ops size also re-register, diff, page and export."""
    label = _label(n)
    for attempt in range(1, args.repeat):  # extra imports into throw-away databases
        with database(backend, files["dir"], f"{label}-try{attempt}") as url:
            rep.add_import_try(spawn("import", url, str(files[label]), DATASET, "1.0.0"))
    with database(backend, files["dir"], label) as url:
        r = spawn("import", url, str(files[label]), DATASET, "1.0.0")
        rep.add_import(backend, n, rep.best_import(r))
        rep.add_page(backend, n, spawn("page", url, DATASET, "1.0.0"))
        if n != args.ops_size:
            return
        r2 = spawn("import", url, str(files[label + "-changed"]), DATASET, "1.1.0")
        rep.add_import(backend, n, r2, note="second version, 1% changed")
        rep.add_reregister(backend, n, spawn("import", url, str(files[label]), DATASET, "1.0.0"))
        diffs = [spawn("diff", url, DATASET, "1.0.0", "1.1.0") for _ in range(args.repeat)]
        rep.add_diff(backend, n, best(diffs))
        if args.deepdiff and backend == "sqlite":
            rep.add_deepdiff(n, spawn("deepdiff", url, DATASET, "1.0.0", "1.1.0"))
        rep.add_deep_page(backend, n, spawn("deep_page", url, DATASET, "1.0.0", n - 100))
        exports = [spawn("export", url, DATASET, "1.0.0") for _ in range(args.repeat)]
        rep.add_export(backend, n, best(exports))


def main(argv: list[str] | None = None) -> None:
    """Parse options, generate files, run every measurement and print the table."""
    p = argparse.ArgumentParser(prog="bench", description=__doc__.split("\n")[0])
    p.add_argument("--full", action="store_true", help="add the 1M-row size")
    p.add_argument("--sizes", default="10k,100k", help="comma list, e.g. 10k,100k,1m")
    p.add_argument("--ops-size", default="100k", help="size for re-register/diff/export")
    p.add_argument("--backends", default="sqlite,postgresql")
    p.add_argument("--deepdiff", action="store_true", help="also time DeepDiff (slow, optional)")
    p.add_argument("--repeat", type=int, default=1, help="best of N for timed runs")
    p.add_argument("--json", type=Path, help="also write the results as JSON here")
    args = p.parse_args(argv)
    sizes = sorted(
        {_size(s) for s in args.sizes.split(",")} | ({1_000_000} if args.full else set())
    )
    args.ops_size = _size(args.ops_size)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if "postgresql" in backends:
        _PG[0] = _pg_admin_url()
        if _PG[0] is None:
            backends.remove("postgresql")
    rep = Report(path_name())
    with tempfile.TemporaryDirectory(prefix="benchbook-bench-") as tmp:
        workdir = Path(tmp)
        files: dict[str, Path] = {"dir": workdir}
        for n in sizes:
            label = _label(n)
            files[label] = write_gsm8k_like(workdir / f"gsm8k-{label}.jsonl", n)
            if n == args.ops_size:
                changed = workdir / f"gsm8k-{label}-changed.jsonl"
                files[label + "-changed"] = write_gsm8k_like(changed, n, changed_every=100)
            raws = []
            for k in range(args.repeat):
                raw_db = workdir / f"raw-{label}-{k}.db"
                raws.append(spawn("raw", str(files[label]), str(raw_db)))
                raw_db.unlink()
            rep.add_raw(n, best(raws))
            if n == args.ops_size:
                rep.add_hash(
                    n, best([spawn("hash", str(files[label])) for _ in range(args.repeat)])
                )
            for backend in backends:
                run_size(rep, backend, n, files, args)
            files.pop(label).unlink()
    rep.print()
    if args.json:
        args.json.write_bytes(orjson.dumps(rep.results, option=orjson.OPT_INDENT_2))


if __name__ == "__main__":
    main()
