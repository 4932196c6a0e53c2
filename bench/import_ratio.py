"""CLI import vs the full raw baseline, whole processes (issue 15, items 2 and 3).

``.venv/bin/python -m bench.import_ratio [--rows 100k] [--rounds 5] [--backends sqlite,postgresql]
[--before SRC]``

Each round runs, one after another (alternating, so load shifts hit both sides alike):

- **raw** (the anchor, ``bench/raw_full.py``): parse, build the case dict, canonical JSON
  (``OPT_SORT_KEYS``), sha256 per row, insert into one SQLite table in one transaction —
  or, for PostgreSQL, ``COPY`` the same rows into one table;
- **CLI import**: ``benchbook import gsm8k --file F --id gsm8k-bench`` into a database already
  migrated (a copy of a migrated empty SQLite file; a PostgreSQL database created from a migrated
  template), so every import stores all rows as new bodies;
- **re-import**: the same command again on that database (an identical, unchanged version),
  against **hash** (``raw_full hash``: the same rows parsed, built, canonicalized and hashed,
  nothing stored);
- **schema floor** (``raw_full schema`` / ``schema-pg``): a bare process writing the same rows
  into a copy of the migrated database's own tables, as the store does, with the two reads that
  finish a version: the floor of this storage layout from one process, reported against the same
  anchor (no import into this schema from one process can be quicker);
- **libraries (floor)** (``bench.startup.LIBRARIES``): a bare process importing only the
  libraries the CLI import path runs on. The report adds **libraries + schema floor**, the sum of
  the two medians: the least a CLI import process of this design can take (its interpreter
  start, ~0.02 s, is counted twice), and reports each CLI import against its schema floor
  (the issue-32 target: ≤ 1.3×).

Every child is started by this small process (a child's peak RSS starts from its parent's, so
the parent generates nothing itself). Reported: medians of wall and CPU (user + system, from
``wait4`` of that one process) and peak RSS, and the ratios CLI/raw and re-import/hash of the
medians. ``--before SRC`` adds the CLI and
re-import with ``PYTHONPATH=SRC`` (an older tree's ``src``), alternating with this tree's. Before
timing, the raw baseline's first three hashes are checked against the import path's, so both
build byte-identical bodies.
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
import uuid
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
CLI = "import sys; from benchbook.cli import app; sys.argv[0] = 'benchbook'; sys.exit(app())"
DATASET = "gsm8k-bench"
DEFAULT_PG = "postgresql://postgres@127.0.0.1:5432/postgres"
DROPPED = ("DATABASE_URL", "BENCHBOOK_DATABASE_URL", "BENCHBOOK_API_KEY", "PYTHONDONTWRITEBYTECODE")
TARGET_IMPORT = 2.0
TARGET_REIMPORT = 1.3
TARGET_FLOOR = 1.3


def _env(src: Path, home: Path, url: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in DROPPED}
    env |= {"PYTHONPATH": f"{src}{os.pathsep}{ROOT}", "BENCHBOOK_HOME": str(home)}
    return env | ({"DATABASE_URL": url} if url else {})


def run(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    """Run one process; wall and CPU seconds (its own ``wait4`` rusage), peak RSS in MB."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(args, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise SystemExit(f"{args[-6:]} failed ({proc.returncode}):\n{err.read()[-3000:]!r}")
        text = out.read().decode()
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "peak_mb": usage.ru_maxrss / 1024,
        "out": text,
    }


def _base(path: str, dest: str) -> None:
    """Write the fields every case shares (row 0's body minus the per-row ones) for ``raw_full``;
    print the import path's hashes of the first three rows. Run in a child, so this process
    stays small (a child's ``ru_maxrss`` starts from its parent's)."""
    from benchbook.datasets.catalog import get_entry
    from benchbook.datasets.mapping import CaseBuilder, case_rows
    from benchbook.datasets.sources.files import FileSource

    entry = get_entry("gsm8k")
    builder = CaseBuilder(entry.recipe.mapping, DATASET, entry.recipe.grader_templates, entry.hook)
    hashes, base = [], {}
    rows = FileSource(Path(path), format="jsonl").rows()
    for case_id, body, h in case_rows(rows, builder, limit=3):
        hashes.append(h)
        base = orjson.loads(body)
        assert case_id == base["id"]
    for key in ("id", "task", "expected", "metadata"):
        base.pop(key)
    Path(dest).write_bytes(orjson.dumps({**base, "__dataset_id": DATASET}))
    sys.stdout.write(orjson.dumps(hashes).decode())


def _pg_template(admin: str, env: dict[str, str]) -> str:
    """A migrated empty database to clone per round."""
    import psycopg

    name = f"bb_ratio_tpl_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = admin.rsplit("/", 1)[0] + "/" + name
    migrate = "from benchbook.cli import app; app(['datasets', 'list'])"
    subprocess.run([sys.executable, "-c", migrate], env=env | {"DATABASE_URL": url}, check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip
    return name


def _pg_db(admin: str, template: str | None) -> str:
    import psycopg

    name = f"bb_ratio_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        tpl = f' TEMPLATE "{template}"' if template else ""
        conn.execute(f'CREATE DATABASE "{name}"{tpl}')
    return name


def _pg_drop(admin: str, name: str) -> None:
    import psycopg

    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.import_ratio")
    p.add_argument("--rows", default="100k")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--backends", default="sqlite,postgresql")
    p.add_argument("--before", type=Path, help="another tree's src, measured alternately")
    p.add_argument("--no-reimport", action="store_true")
    opts = p.parse_args(argv)
    n_rows = int(float(opts.rows.lower().rstrip("km")) * {"k": 1e3, "m": 1e6}.get(
        opts.rows.lower()[-1], 1))  # fmt: skip
    trees = {"this": ROOT / "src"} | ({"before": opts.before.resolve()} if opts.before else {})
    admin = os.environ.get("BENCHBOOK_BENCH_DATABASE_URL", DEFAULT_PG).replace(
        "postgresql+psycopg://", "postgresql://")  # fmt: skip
    results: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="bb-ratio-") as tmp_dir:
        tmp = Path(tmp_dir)
        data = tmp / "gsm8k.jsonl"
        gen = "import sys; from bench.gen import write_gsm8k_like as w; w(__import__('pathlib')"
        gen += ".Path(sys.argv[1]), int(sys.argv[2]))"
        run([sys.executable, "-c", gen, str(data), str(n_rows)], _env(ROOT / "src", tmp))
        base = tmp / "base.json"
        make_base = "import sys; from bench.import_ratio import _base; _base(*sys.argv[1:])"
        made = run([sys.executable, "-c", make_base, str(data), str(base)], _env(ROOT / "src", tmp))
        expected = orjson.loads(made["out"])
        check = run([sys.executable, "-m", "bench.raw_full", "hash", str(data), str(base)],
                    _env(ROOT / "src", tmp))  # fmt: skip
        got = orjson.loads(check["out"])["first"]
        if got != expected:
            raise SystemExit(f"raw baseline builds other bodies: {got} != {expected}")
        for backend in [b.strip() for b in opts.backends.split(",") if b.strip()]:
            _backend(backend, opts, trees, tmp, data, base, admin, results)
    _report(results, opts.rounds, n_rows)
    return 0


def _backend(
    backend: str, opts: Any, trees: dict[str, Path], tmp: Path, data: Path, base: Path,
    admin: str, results: dict[str, list[dict[str, Any]]],
) -> None:  # fmt: skip
    """One backend: a warm-up round, then ``opts.rounds`` timed rounds."""
    from bench.startup import LIBRARIES

    raw_cmd = [sys.executable, "-m", "bench.raw_full"]
    cli = [sys.executable, "-c", CLI, "import", "gsm8k", "--file", str(data), "--id", DATASET]
    cli += ["--version", "1.0.0"]
    templates: dict[str, str] = {}
    for tree, src in trees.items():
        home = tmp / f"tpl-{backend}-{tree}"
        home.mkdir()
        env = _env(src, home)
        if backend == "sqlite":
            subprocess.run([sys.executable, "-c", CLI, "datasets", "list"], env=env, check=True,
                           stdout=subprocess.DEVNULL)  # fmt: skip
            templates[tree] = str(home / "benchbook.db")
        else:
            templates[tree] = _pg_template(admin, env)
    made: list[str] = []
    try:
        for n in range(-1, opts.rounds):
            record = (lambda k, r: results.setdefault(k, []).append(r)) if n >= 0 else (
                lambda k, r: None)  # fmt: skip
            record(
                "libraries (floor)", run([sys.executable, "-c", LIBRARIES], _env(ROOT / "src", tmp))
            )
            if backend == "sqlite":
                raw_db = tmp / f"raw-{n}.db"
                record("raw sqlite", run([*raw_cmd, "sqlite", str(data), str(base), str(raw_db)],
                                         _env(ROOT / "src", tmp)))  # fmt: skip
                raw_db.unlink()
                floor_db = tmp / f"floor-{n}.db"
                shutil.copy(templates["this"], floor_db)
                record("schema floor sqlite", run(
                    [*raw_cmd, "schema", str(data), str(base), str(floor_db)],
                    _env(ROOT / "src", tmp)))  # fmt: skip
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{floor_db}{suffix}").unlink(missing_ok=True)
            else:
                name = _pg_db(admin, None)
                made.append(name)
                url = admin.rsplit("/", 1)[0] + "/" + name
                record("raw copy", run([*raw_cmd, "copy", str(data), str(base), url],
                                       _env(ROOT / "src", tmp)))  # fmt: skip
                name = _pg_db(admin, templates["this"])
                made.append(name)
                url = admin.rsplit("/", 1)[0] + "/" + name
                record("schema floor postgresql", run(
                    [*raw_cmd, "schema-pg", str(data), str(base), url],
                    _env(ROOT / "src", tmp)))  # fmt: skip
            for tree, src in trees.items():
                home = tmp / f"{backend}-{tree}-{n}"
                home.mkdir()
                url = None
                if backend == "sqlite":
                    shutil.copy(templates[tree], home / "benchbook.db")
                else:
                    name = _pg_db(admin, templates[tree])
                    made.append(name)
                    url = admin.rsplit("/", 1)[0] + "/" + name
                env = _env(src, home, url)
                record(f"CLI import {backend} [{tree}]", run(cli, env))
                if not opts.no_reimport:
                    record(f"CLI re-import {backend} [{tree}]", run(cli, env))
                if backend == "sqlite":
                    shutil.rmtree(home)
            if not opts.no_reimport:
                record("hash", run([*raw_cmd, "hash", str(data), str(base)],
                                   _env(ROOT / "src", tmp)))  # fmt: skip
            for name in made:
                _pg_drop(admin, name)
            made.clear()
    finally:
        for name in made + (list(templates.values()) if backend != "sqlite" else []):
            _pg_drop(admin, name)


def _report(results: dict[str, list[dict[str, Any]]], rounds: int, n_rows: int) -> None:
    med = {
        k: {m: statistics.median(r[m] for r in rs) for m in ("wall", "cpu", "peak_mb")}
        for k, rs in results.items()
    }
    print(f"{n_rows:,} rows, {rounds} alternating rounds, medians; load average {os.getloadavg()}")
    print(f"{'measurement':<34} {'wall':>8} {'CPU':>8} {'peak':>7}  ratio (wall / CPU)")
    for name, m in med.items():
        anchor, target = None, None
        if name.startswith(("CLI import", "schema floor")):
            anchor = med.get("raw sqlite" if "sqlite" in name else "raw copy")
            target = TARGET_IMPORT
        elif name.startswith("CLI re-import"):
            anchor, target = med.get("hash"), TARGET_REIMPORT
        ratio = ""
        if anchor:
            rw, rc = m["wall"] / anchor["wall"], m["cpu"] / anchor["cpu"]
            verdict = "ok" if rw <= target else "MISSED"  # type: ignore[operator]
            ratio = f"{rw:.2f}x / {rc:.2f}x (target ≤ {target}x: {verdict})"
        print(f"{name:<34} {m['wall']:>7.3f}s {m['cpu']:>7.3f}s {m['peak_mb']:>5.0f}MB  {ratio}")
    libraries = med.get("libraries (floor)")
    for backend in ("sqlite", "postgresql"):
        floor = med.get(f"schema floor {backend}")
        if floor is None:
            continue
        if libraries is not None:
            least = libraries["wall"] + floor["wall"]
            said = f"{least / floor['wall']:.2f}x the schema floor: the least a CLI import can take"
            print(f"{'libraries + schema floor ' + backend:<34} {least:>7.3f}s  {said}")
        for name, m in med.items():
            if name.startswith(f"CLI import {backend}"):
                rw = m["wall"] / floor["wall"]
                verdict = "ok" if rw <= TARGET_FLOOR else "MISSED"
                print(f"{name + ' / floor':<34} {rw:>7.2f}x  (target ≤ {TARGET_FLOOR}x: {verdict})")


if __name__ == "__main__":
    sys.exit(main())
