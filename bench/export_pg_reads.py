"""Where a PostgreSQL export's time goes: client CPU against the database backend's CPU for
ways of reading one version's bodies in position order (issue 15, item 4).

``.venv/bin/python -m bench.export_pg_reads [--rows 100k] [--rounds 7]`` imports ``--rows``
GSM8K-like cases into a fresh PostgreSQL database (``ANALYZE``d), then runs each read below on
one bare psycopg connection, in an order that rotates every round, and prints the medians of
wall time, this process's CPU and the connection's backend CPU (``/proc/PID/stat`` of
``pg_backend_pid()``: the server must run on this machine). Every read is checked once to give
the same bytes as the first.

- ``text``: the export before (named cursor, ``fetchmany`` of 5,000, ``str`` encoded back);
- ``binary``: the export now (the same cursor in binary format, ``text`` loaded as ``bytes``);
- ``copy``: ``COPY (…) TO STDOUT (FORMAT binary)`` read through psycopg, 6 bytes cut a row;
- ``heap``: the same bodies in heap order (no probe per case; not the export's order, so it is
  left out of the byte check): what shipping the rows alone costs.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

_SQL = (
    "SELECT cb.body FROM version_cases vc JOIN case_bodies cb ON cb.id = vc.body_id"
    " WHERE vc.version_pk = %s ORDER BY vc.position"
)
_COPY = (
    "COPY (SELECT (SELECT body FROM case_bodies cb WHERE cb.id = vc.body_id)"
    " FROM version_cases vc WHERE vc.version_pk = {pk} ORDER BY vc.position)"
    " TO STDOUT (FORMAT binary)"
)
_SIGNATURE = b"PGCOPY\n\xff\r\n\x00"


def _cursor_read(conn: Any, pk: int, binary: bool, sql: str = _SQL) -> list[bytes]:
    from psycopg.types.string import ByteaBinaryLoader

    out = []
    with conn.transaction():
        conn.execute("SET LOCAL jit = off")
        cur = conn.cursor(name="bench_read", binary=binary)
        if binary:
            cur.adapters.register_loader("text", ByteaBinaryLoader)
        cur.execute(sql, (pk,))
        while rows := cur.fetchmany(5000):
            bodies = [b for (b,) in rows] if binary else [b.encode() for (b,) in rows]
            out.append(b"\n".join(bodies) + b"\n")
        cur.close()
    return out


def _copy_read(conn: Any, pk: int) -> list[bytes]:
    out, batch = [], []
    with conn.transaction():
        conn.execute("SET LOCAL jit = off")
        with conn.cursor().copy(_COPY.format(pk=int(pk))) as copy:
            for data in copy:
                if data[:11] == _SIGNATURE:
                    data = data[19:]  # the header rides with the first row
                if len(data) <= 2:  # the trailer (or a header alone)
                    continue
                batch.append(data[6:])  # field count (2 bytes), length (4)
                if len(batch) == 5000:
                    out.append(b"\n".join(batch) + b"\n")
                    batch = []
    if batch:
        out.append(b"\n".join(batch) + b"\n")
    return out


def _reads(pk: int) -> dict[str, Callable[[Any], list[bytes]]]:
    heap = "SELECT body FROM case_bodies WHERE %s > 0"
    return {
        "text": lambda c: _cursor_read(c, pk, binary=False),
        "binary": lambda c: _cursor_read(c, pk, binary=True),
        "copy": lambda c: _copy_read(c, pk),
        "heap": lambda c: _cursor_read(c, pk, binary=True, sql=heap),
    }


def _backend_cpu(pid: int) -> float:
    import os

    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(url: str, pk: int, rounds: int) -> dict[str, dict[str, float]]:
    """Medians of ``{"wall", "cpu", "backend_cpu"}`` (seconds) per read."""
    import psycopg

    conn = psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"))
    backend = conn.execute("SELECT pg_backend_pid()").fetchone()[0]  # type: ignore[index]
    reads = _reads(pk)
    digest = None
    for name, read in reads.items():
        if name != "heap":
            got = hashlib.sha256(b"".join(read(conn))).hexdigest()
            if digest not in (None, got):
                raise SystemExit(f"{name}: other bytes than the first read")
            digest = got
    names = list(reads)
    samples: dict[str, list[tuple[float, float, float]]] = {n: [] for n in names}
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            wall, cpu, bcpu = time.perf_counter(), time.process_time(), _backend_cpu(backend)
            reads[name](conn)
            samples[name].append(
                (
                    time.perf_counter() - wall,
                    time.process_time() - cpu,
                    _backend_cpu(backend) - bcpu,
                )
            )
    conn.close()
    return {
        n: {
            k: statistics.median(s[i] for s in got)
            for i, k in enumerate(("wall", "cpu", "backend_cpu"))
        }
        for n, got in samples.items()
    }


def main(argv: list[str] | None = None) -> int:
    import os

    from bench.__main__ import _PG, _pg_admin_url, _size, database, spawn
    from bench.export_http import DATASET, VERSION, _version_pk
    from bench.gen import write_gsm8k_like

    p = argparse.ArgumentParser(prog="python -m bench.export_pg_reads", description=__doc__)
    p.add_argument("--rows", default="100k")
    p.add_argument("--rounds", type=int, default=7)
    opts = p.parse_args(argv)
    _PG[0] = _pg_admin_url()
    if _PG[0] is None:
        return 1
    n_rows = _size(opts.rows)
    with tempfile.TemporaryDirectory(prefix="bb-pgreads-") as tmp:
        source = write_gsm8k_like(Path(tmp) / "rows.jsonl", n_rows)
        with database("postgresql", Path(tmp), "pgreads") as url:
            spawn("import", url, str(source), DATASET, VERSION)
            result = measure(url, _version_pk(url), opts.rounds)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{n_rows:,} bodies, {opts.rounds} rotating rounds, medians; load average {load}")
    for name, m in result.items():
        print(f"  {name:7} wall {m['wall']:6.3f} s   client CPU {m['cpu']:6.3f} s   "
              f"backend CPU {m['backend_cpu']:6.3f} s")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
