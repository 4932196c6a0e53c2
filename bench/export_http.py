"""JSONL export over HTTP against a raw read-back (issue 15, item 4).

``.venv/bin/python -m bench.export_http [--rows 100k] [--rounds 7] [--backends sqlite,postgresql]
[--before SRC] [--tree NAME=SRC ...]``

Per backend, ``--rows`` GSM8K-like cases are imported once (``bench.tasks`` ``import``; on
PostgreSQL then ``ANALYZE``d, as autovacuum soon would). A real server (``benchbook serve``:
uvicorn, one process) is started on that database for this tree and one for every other tree
(``--before SRC``, ``--tree NAME=SRC``: another tree's ``src``). Each round runs, in an order that
rotates every round (so load shifts hit every side alike):

- **anchor**: a bare process (``--anchor``, nothing from Benchbook imported) that reads the same
  bodies back with the DBAPI (``sqlite3`` / ``psycopg``; one ``SELECT`` joined to the bodies,
  ordered by position, ``fetchmany`` of 5,000, a server-side cursor on PostgreSQL, bodies as
  UTF-8 bytes) and writes them as JSONL to ``/dev/null``: the least any export could do;
- **export**: ``curl`` downloading ``GET /api/datasets/ID/versions/1.0.0/cases.jsonl`` to
  ``/dev/null`` (a subprocess: the client costs no Python), per server.

Times are in-process (the anchor's first query to its last write, once connected; curl's
``time_total``): no interpreter start-up on either side. Also reported: the anchor's CPU seconds
and each server's CPU seconds per export (user + system of the server process, from ``/proc``:
steadier than wall time on a loaded machine, where a single-threaded anchor gets one share of
the cores and a server's two busy threads two), and each server's peak RSS (``VmHWM``) before
the first export and after the last. One untimed warm-up round first, which also checks that
every server's download is byte-identical to the anchor's output (sha256 and length). Prints
medians, rows/s and the ratios.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
DATASET = "gsm8k-export"
VERSION = "1.0.0"
TARGET_ROWS_S = 150_000
SERVE = "import sys; from benchbook.cli import app; sys.argv[0] = 'benchbook'; sys.exit(app())"
DROPPED = ("DATABASE_URL", "BENCHBOOK_DATABASE_URL", "BENCHBOOK_API_KEY", "PYTHONDONTWRITEBYTECODE")
_ANCHOR_SQL = (
    "SELECT cb.body FROM version_cases vc JOIN case_bodies cb ON cb.id = vc.body_id"
    " WHERE vc.version_pk = {p} ORDER BY vc.position"
)


def anchor(url: str, version_pk: int, out: str) -> dict[str, Any]:
    """Read every body of ``version_pk`` with the bare DBAPI and write JSONL to ``out``:
    ``{"seconds", "cpu", "bytes", "sha256"}`` (the hash only when ``out`` is not ``/dev/null``;
    ``cpu``: this process's CPU seconds). The clock starts once connected (a server's pool is
    warm)."""
    digest = hashlib.sha256() if out != os.devnull else None
    size = 0
    if url.startswith("sqlite"):
        import sqlite3

        conn: Any = sqlite3.connect(url.split("///", 1)[1])
        conn.text_factory = bytes
        started, cpu = time.perf_counter(), time.process_time()
        cur = conn.cursor()
        cur.execute(_ANCHOR_SQL.format(p="?"), (version_pk,))
        encode = False
    else:
        import psycopg

        conn = psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"))
        conn.execute("SET jit = off")  # as the export does: a plain scan compiles nothing
        started, cpu = time.perf_counter(), time.process_time()
        cur = conn.cursor(name="bench_anchor")
        cur.execute(_ANCHOR_SQL.format(p="%s"), (version_pk,))
        encode = True
    with open(out, "wb") as sink:
        while rows := cur.fetchmany(5000):
            bodies = [r[0].encode() for r in rows] if encode else [r[0] for r in rows]
            block = b"\n".join(bodies) + b"\n"
            size += len(block)
            if digest is not None:
                digest.update(block)
            sink.write(block)
    conn.close()
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    return {"seconds": seconds, "cpu": cpu, "bytes": size,
            "sha256": digest.hexdigest() if digest else None}  # fmt: skip


def _env(src: Path, home: Path, url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in DROPPED}
    env |= {"PYTHONPATH": f"{src}{os.pathsep}{ROOT}", "BENCHBOOK_HOME": str(home)}
    return env | {"DATABASE_URL": url, "BENCHBOOK_RUN_WORKER": "false"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(src: Path, home: Path, url: str) -> tuple[subprocess.Popen[bytes], str]:
    """``benchbook serve`` of the tree ``src`` on a free port; the process and its base URL."""
    port = _free_port()
    home.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-c", SERVE, "serve", "--port", str(port)]
    log = (home / "serve.log").open("wb")
    proc = subprocess.Popen(cmd, env=_env(src, home, url), stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        got = subprocess.run(["curl", "-s", "-o", os.devnull, "-w", "%{http_code}",
                              base + "/api/health"], capture_output=True)  # fmt: skip
        if got.stdout == b"200":
            return proc, base
        if proc.poll() is not None:
            break
        time.sleep(0.3)
    proc.kill()
    raise SystemExit(f"benchbook serve ({src}) did not start:\n{(home / 'serve.log').read_text()}")


def _proc_cpu(pid: int) -> float:
    """User + system CPU seconds of ``pid`` so far (``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _proc_hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("VmHWM not found")


def _curl(base: str, key: str, out: str, pid: int) -> dict[str, Any]:
    """Download the export with curl to ``out``: seconds (curl's ``time_total``), bytes, server
    CPU seconds spent meanwhile."""
    path = f"/api/datasets/{DATASET}/versions/{VERSION}/cases.jsonl"
    cpu0 = _proc_cpu(pid)
    got = subprocess.run(
        ["curl", "-sS", "-f", "-o", out, "-H", f"Authorization: Bearer {key}",
         "-w", "%{time_total} %{size_download}", base + path],
        capture_output=True, check=True,
    )  # fmt: skip
    seconds, size = got.stdout.split()
    return {"seconds": float(seconds), "bytes": int(size), "server_cpu": _proc_cpu(pid) - cpu0}


def _run_anchor(url: str, version_pk: int, out: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT)
    got = subprocess.run(
        [sys.executable, "-m", "bench.export_http", "--anchor", url, str(version_pk), out],
        capture_output=True, check=True, env=env,
    )  # fmt: skip
    result: dict[str, Any] = orjson.loads(got.stdout)
    return result


def _version_pk(url: str) -> int:
    """The version's primary key; on PostgreSQL after ``ANALYZE`` (what autovacuum does within
    a minute of a bulk load: the planner then knows the tables' sizes)."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    if engine.dialect.name == "postgresql":
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text("ANALYZE"))
    with engine.connect() as conn:
        pk = conn.execute(
            text("SELECT pk FROM dataset_versions WHERE dataset_id = :d AND version = :v"),
            {"d": DATASET, "v": VERSION},
        ).scalar_one()
    engine.dispose()
    return int(pk)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _backend(
    backend: str, url: str, trees: dict[str, Path], work: Path, source: Path, opts: Any
) -> dict[str, Any]:
    """Seed, serve every tree, check the bytes, run the rounds; the results of this backend."""
    from bench.__main__ import spawn
    from bench.client import api_key

    spawn("import", url, str(source), DATASET, VERSION)
    key = api_key(url)
    version_pk = _version_pk(url)
    servers = {
        tree: _serve(src, work / f"home-{backend}-{tree}", url) for tree, src in trees.items()
    }
    try:
        idle_mb = {tree: _proc_hwm_mb(p.pid) for tree, (p, _) in servers.items()}
        # Warm-up round, which also checks every output byte for byte against the anchor's.
        check = _run_anchor(url, version_pk, str(work / "anchor.jsonl"))
        (work / "anchor.jsonl").unlink()
        for tree, (proc, base) in servers.items():
            got = _curl(base, key, str(work / f"{tree}.jsonl"), proc.pid)
            digest = _sha256(work / f"{tree}.jsonl")
            (work / f"{tree}.jsonl").unlink()
            if (digest, got["bytes"]) != (check["sha256"], check["bytes"]):
                raise SystemExit(f"{backend} [{tree}]: the export differs from the anchor's bytes")
        sides = ["anchor", *servers]
        times: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
        for n in range(opts.rounds):
            for side in sides[n % len(sides) :] + sides[: n % len(sides)]:
                if side == "anchor":
                    times[side].append(_run_anchor(url, version_pk, os.devnull))
                else:
                    proc, base = servers[side]
                    times[side].append(_curl(base, key, os.devnull, proc.pid))
        peak_mb = {tree: _proc_hwm_mb(p.pid) for tree, (p, _) in servers.items()}
    finally:
        for proc, _ in servers.values():
            proc.terminate()
            proc.wait(timeout=30)
    return {"times": times, "idle_mb": idle_mb, "peak_mb": peak_mb, "bytes": check["bytes"]}


def _report(backend: str, n_rows: int, result: dict[str, Any]) -> None:
    times = result["times"]
    med = {side: statistics.median(r["seconds"] for r in rs) for side, rs in times.items()}
    print(f"{backend}: {n_rows:,} cases, {result['bytes'] / 1e6:.1f} MB, "
          f"{len(times['anchor'])} rotating rounds, medians; load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")  # fmt: skip
    a = med["anchor"]
    a_cpu = statistics.median(r["cpu"] for r in times["anchor"])
    print(f"  {'anchor (DBAPI read-back)':<26} {a:7.3f} s {n_rows / a:>9,.0f} rows/s; "
          f"CPU {a_cpu:.3f} s")  # fmt: skip
    for side, secs in med.items():
        if side == "anchor":
            continue
        cpu = statistics.median(r["server_cpu"] for r in times[side])
        rate = n_rows / secs
        verdict = "ok" if rate >= TARGET_ROWS_S else "MISSED"
        print(f"  {f'export curl [{side}]':<26} {secs:7.3f} s {rate:>9,.0f} rows/s "
              f"= {secs / a:.2f}x anchor; server CPU {cpu:.3f} s = {cpu / a_cpu:.2f}x "
              f"the anchor's; RSS "
              f"{result['idle_mb'][side]:.0f} MB idle -> {result['peak_mb'][side]:.0f} MB peak "
              f"(target >= {TARGET_ROWS_S:,}/s: {verdict})")  # fmt: skip
    for side in med:
        if side in ("anchor", "this"):
            continue
        print(f"  {side} -> this: {med[side] / med['this']:.2f}x faster wall, server CPU "
              f"{statistics.median(r['server_cpu'] for r in times[side]):.3f} s -> "
              f"{statistics.median(r['server_cpu'] for r in times['this']):.3f} s")  # fmt: skip
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--anchor"]:
        print(orjson.dumps(anchor(argv[1], int(argv[2]), argv[3])).decode())
        return 0
    from bench.__main__ import _PG, _pg_admin_url, _size, database
    from bench.gen import write_gsm8k_like

    p = argparse.ArgumentParser(prog="python -m bench.export_http")
    p.add_argument("--rows", default="100k")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--backends", default="sqlite,postgresql")
    p.add_argument("--before", type=Path, help="another tree's src, served and measured alike")
    p.add_argument("--tree", action="append", default=[], metavar="NAME=SRC",
                   help="one more tree's src to serve and measure (repeatable)")  # fmt: skip
    opts = p.parse_args(argv)
    n_rows = _size(opts.rows)
    trees = {"this": ROOT / "src"} | ({"before": opts.before.resolve()} if opts.before else {})
    trees |= {name: Path(src).resolve() for name, _, src in (t.partition("=") for t in opts.tree)}
    with tempfile.TemporaryDirectory(prefix="bb-export-") as tmp:
        work = Path(tmp)
        source = write_gsm8k_like(work / "rows.jsonl", n_rows)
        for backend in [b.strip() for b in opts.backends.split(",") if b.strip()]:
            if backend == "postgresql":
                _PG[0] = _pg_admin_url()
                if _PG[0] is None:
                    continue
            with database(backend, work, "export") as url:
                _report(backend, n_rows, _backend(backend, url, trees, work, source, opts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
