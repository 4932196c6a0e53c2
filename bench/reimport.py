"""Identical re-import of an unchanged file against hashing the file (issue 32, item (b)).

``.venv/bin/python -m bench.reimport [--rows 100k] [--rounds 7] [--backends sqlite,postgresql]
[--tree NAME=SRC ...]``

Per backend and tree (this tree's ``src``, plus each ``--tree``: another tree's ``src``, e.g. a
checkout from before the change), one child process with ``PYTHONPATH=SRC`` imports a
GSM8K-like JSONL file of ``--rows`` rows once (``import_benchmark``, the catalog ``gsm8k``
mapping, as ``benchbook import gsm8k --file``), then runs ``--rounds`` alternating rounds of:

- **hash** (the named baseline): ``hashlib.sha256`` of the file's bytes, read in 1 MiB blocks;
- **re-import**: the same ``import_benchmark`` again: an identical, unchanged version.

Both in the same process (no interpreter start-up on either side). Prints the medians and the
ratio re-import / hash per backend and tree, with the load average.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PG = "postgresql://postgres@127.0.0.1:5432/postgres"
TARGET = 1.3
DROPPED = ("DATABASE_URL", "BENCHBOOK_DATABASE_URL", "BENCHBOOK_API_KEY")


def hash_file(path: Path) -> float:
    """Seconds to sha256 the file's bytes."""
    started = time.perf_counter()
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    digest.hexdigest()
    return time.perf_counter() - started


def child(url: str, data: str, home: str, rounds: int) -> dict[str, Any]:
    """In the tree under test: import once, then alternate hash and re-import."""
    from benchbook.contracts.imports import ImportRequest
    from benchbook.services.context import local_admin_context
    from benchbook.services.imports import import_benchmark
    from benchbook.settings import Settings
    from benchbook.store.engine import make_engine, migrate

    engine = make_engine(url)
    migrate(engine)
    ctx = local_admin_context(engine, Settings(home=Path(home), database_url=url))
    request = ImportRequest(benchmark="gsm8k", id="gsm8k-reimport", version="1.0.0")
    path = Path(data)
    first = import_benchmark(ctx, request, file=path)
    assert first.created
    hashes, reimports = [], []
    for _ in range(rounds):
        hashes.append(hash_file(path))
        started = time.perf_counter()
        again = import_benchmark(ctx, request, file=path)
        reimports.append(time.perf_counter() - started)
        assert not again.created and again.content_hash == first.content_hash
    engine.dispose()
    return {"hash": hashes, "reimport": reimports}


def _pg(admin: str) -> tuple[str, str]:
    import psycopg

    name = f"bb_reimport_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return name, admin.rsplit("/", 1)[0] + "/" + name


def _drop(admin: str, name: str) -> None:
    import psycopg

    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        url, data, home, rounds = argv[1:5]
        print(orjson.dumps(child(url, data, home, int(rounds))).decode())
        return 0
    p = argparse.ArgumentParser(prog="python -m bench.reimport")
    p.add_argument("--rows", default="100k")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--backends", default="sqlite,postgresql")
    p.add_argument("--tree", action="append", default=[], help="NAME=SRC of another tree")
    opts = p.parse_args(argv)
    text = opts.rows.lower()
    rows = int(float(text.rstrip("km")) * {"k": 1e3, "m": 1e6}.get(text[-1], 1))
    trees = {"this": ROOT / "src"} | {
        t.split("=", 1)[0]: Path(t.split("=", 1)[1]).resolve() for t in opts.tree
    }
    admin = os.environ.get("BENCHBOOK_BENCH_DATABASE_URL", DEFAULT_PG)
    admin = admin.replace("postgresql+psycopg://", "postgresql://")
    lines = []
    with tempfile.TemporaryDirectory(prefix="bb-reimport-") as tmp:
        sys.path.insert(0, str(ROOT))
        from bench.gen import write_gsm8k_like

        data = write_gsm8k_like(Path(tmp) / "gsm8k.jsonl", rows)
        for backend in [b.strip() for b in opts.backends.split(",") if b.strip()]:
            for tree, src in trees.items():
                home = Path(tmp) / f"home-{backend}-{tree}"
                home.mkdir()
                made = None
                if backend == "sqlite":
                    url = f"sqlite:///{home / 'benchbook.db'}"
                else:
                    made, url = _pg(admin)
                env = {k: v for k, v in os.environ.items() if k not in DROPPED}
                env["PYTHONPATH"] = f"{src}{os.pathsep}{ROOT}"
                cmd = [sys.executable, "-m", "bench.reimport", "--child", url, str(data)]
                try:
                    out = subprocess.run(
                        [*cmd, str(home), str(opts.rounds)],
                        env=env, cwd=ROOT, capture_output=True, check=True,
                    )  # fmt: skip
                finally:
                    if made:
                        _drop(admin, made)
                got = orjson.loads(out.stdout.splitlines()[-1])
                h, r = statistics.median(got["hash"]), statistics.median(got["reimport"])
                verdict = "ok" if r / h <= TARGET else "MISSED"
                lines.append(
                    f"{backend:<10} [{tree}] hash {h * 1000:7.1f} ms  re-import {r * 1000:7.1f} ms"
                    f"  {r / h:5.2f}x (target ≤ {TARGET}x: {verdict})"
                )
    print(f"{rows:,} rows, {opts.rounds} alternating rounds, medians; load {os.getloadavg()}")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
