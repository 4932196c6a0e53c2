"""The full raw import baseline as a bare process: ``python -m bench.raw_full MODE FILE BASE [DB]``.

Per line of a GSM8K-like JSONL file: ``orjson.loads``, the case built as a plain dict (``BASE``,
a JSON file holding the case fields every row shares, plus id, task, expected by the catalog's
``answer_pattern`` and metadata), canonical JSON (``orjson.dumps`` with ``OPT_SORT_KEYS``, the
bytes the registry stores), ``sha256`` hex; then by ``MODE``:

- ``sqlite``: ``(case_id, hash, body)`` inserted into a one-table SQLite database ``DB``
  (rowid key, no other index), batched ``executemany``, one transaction;
- ``copy``: the same rows ``COPY``'d into a one-table PostgreSQL table in the database at the
  URL ``DB`` (psycopg), one transaction;
- ``hash``: nothing stored (the bar for an identical re-import);
- ``schema`` (a floor, not an anchor): the same rows written into **Benchbook's own tables** of
  ``DB``, a copy of a migrated empty Benchbook SQLite database, as the store writes them and with
  its pragmas (WAL, ``synchronous=NORMAL``, foreign keys on, a 64 MiB page cache): a version
  header, ``case_bodies`` under fresh ids (``ON CONFLICT (hash) DO NOTHING`` into its unique
  ``hash`` index), ``version_cases`` (primary key and ``(version_pk, case_id)`` index), then the
  two reads the store needs to finish a version (the duplicate-id ``GROUP BY`` and the case
  hashes in case-id order for the content hash), one transaction;
- ``schema-pg``: the same into the migrated PostgreSQL database at the URL ``DB``: bodies and
  links binary-``COPY``'d straight into ``case_bodies`` and ``version_cases`` in one statement
  each (the import does the same per batch, after drawing the ids from the sequence, in a
  savepoint, and must fall back to ``ON CONFLICT`` when a body is stored already), the sequence
  moved past the ids used, then the same two reads.

The two ``schema`` modes are what no import into this schema can beat from one process: the
storage layout's own cost with nothing of Benchbook's (no SQLAlchemy, pydantic or checks).

Imports nothing from Benchbook, so the process is the bare cost: interpreter, orjson, hashlib and
the driver. Prints one JSON line: rows and the hex hashes of the first three rows (the bench
checks them against the import path's, so the baseline builds the very same bodies).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from hashlib import sha256
from pathlib import Path

import orjson

BATCH = 2000
ANSWER = re.compile(r"####\s*(.+?)\s*$")  # the gsm8k catalog entry's answer_pattern


def rows(path: str, base: dict[str, object], dataset_id: str) -> Iterator[tuple[str, str, str]]:
    """``(case_id, sha256 hex, canonical body)`` per line."""
    dumps, loads, sorted_keys = orjson.dumps, orjson.loads, orjson.OPT_SORT_KEYS
    with open(path, "rb") as f:
        for i, line in enumerate(f):
            row = loads(line)
            answer = row["answer"]
            match = ANSWER.search(answer)
            if match is None:
                raise SystemExit(f"line {i + 1}: no answer")
            case = base.copy()
            case["id"] = case_id = f"{dataset_id}-{i}"
            case["task"] = row["question"]
            case["expected"] = match.group(1).strip()
            case["metadata"] = {"answer": answer}
            body = dumps(case, option=sorted_keys)
            yield case_id, sha256(body).hexdigest(), body.decode()


def to_sqlite(stream: Iterator[tuple[str, str, str]], db: str) -> int:
    import sqlite3

    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("CREATE TABLE raw_cases (id INTEGER PRIMARY KEY, case_id, hash, body)")
    conn.execute("BEGIN")
    n, batch = 0, []
    sql = "INSERT INTO raw_cases (case_id, hash, body) VALUES (?, ?, ?)"
    for row in stream:
        batch.append(row)
        if len(batch) >= BATCH:
            conn.executemany(sql, batch)
            n += len(batch)
            batch.clear()
    conn.executemany(sql, batch)
    conn.execute("COMMIT")
    conn.close()
    return n + len(batch)


def to_postgres(stream: Iterator[tuple[str, str, str]], url: str) -> int:
    import psycopg

    n = 0
    with psycopg.connect(url) as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE raw_cases (case_id text, hash text, body text)")
        with cur.copy("COPY raw_cases (case_id, hash, body) FROM STDIN") as cp:
            for row in stream:
                cp.write_row(row)
                n += 1
    return n  # the connection block commits


#: The reads that finish a version (``store.datasets.duplicate_case_ids``, ``case_hashes_by_id``).
_FINISH = (
    "SELECT case_id FROM version_cases WHERE version_pk = {p} GROUP BY case_id"
    " HAVING count(*) > 1 LIMIT 20",
    "SELECT vc.case_id, cb.hash FROM version_cases vc JOIN case_bodies cb ON cb.id = vc.body_id"
    " WHERE vc.version_pk = {p} ORDER BY vc.case_id{collate}",
)
_HEADER = (
    "INSERT INTO dataset_versions (workspace, dataset_id, version, is_prerelease, tags,"
    " content_hash, case_count, created_by, created_at)"
    " VALUES ('default', 'floor', '1.0.0', false, '[]', '', 0, 'bench', '2026-01-01')"
)


def to_schema_sqlite(stream: Iterator[tuple[str, str, str]], db: str) -> int:
    import sqlite3

    conn = sqlite3.connect(db, isolation_level=None)
    for pragma in (
        "journal_mode=WAL",
        "synchronous=NORMAL",
        "foreign_keys=ON",
        "cache_size=-65536",
    ):
        conn.execute(f"PRAGMA {pragma}")
    conn.execute("BEGIN IMMEDIATE")
    pk = conn.execute(_HEADER).lastrowid
    first_id = int(conn.execute("SELECT coalesce(max(id), 0) FROM case_bodies").fetchone()[0])
    n, bodies, links = 0, [], []

    def flush() -> None:
        conn.executemany(
            "INSERT INTO case_bodies (id, hash, body) VALUES (?, ?, ?)"
            " ON CONFLICT (hash) DO NOTHING",
            bodies,
        )
        conn.executemany(
            "INSERT INTO version_cases (version_pk, position, case_id, body_id)"
            " VALUES (?, ?, ?, ?)",
            links,
        )
        bodies.clear()
        links.clear()

    for case_id, digest, body in stream:
        bodies.append((first_id + n + 1, digest, body))
        links.append((pk, n, case_id, first_id + n + 1))
        n += 1
        if len(bodies) >= BATCH:
            flush()
    flush()
    for sql in _FINISH:
        for _ in conn.execute(sql.format(p=int(pk), collate="")):
            pass
    conn.execute("COMMIT")
    conn.close()
    return n


def to_schema_postgres(stream: Iterator[tuple[str, str, str]], url: str) -> int:
    import psycopg

    n = 0
    with psycopg.connect(url) as conn, conn.cursor() as cur:
        pk = cur.execute(_HEADER + " RETURNING pk").fetchone()[0]  # type: ignore[index]
        first_id = cur.execute("SELECT coalesce(max(id), 0) FROM case_bodies").fetchone()[0]  # type: ignore[index]
        links = []
        with cur.copy("COPY case_bodies (id, hash, body) FROM STDIN (FORMAT BINARY)") as cp:
            cp.set_types(["int8", "text", "text"])
            for case_id, digest, body in stream:
                n += 1
                cp.write_row((first_id + n, digest, body))
                links.append((pk, n - 1, case_id, first_id + n))
        cur.execute("SELECT setval('case_bodies_id_seq', %s)", (first_id + n,))
        with cur.copy(
            "COPY version_cases (version_pk, position, case_id, body_id) FROM STDIN (FORMAT BINARY)"
        ) as cp:
            cp.set_types(["int8", "int4", "text", "int8"])
            for link in links:
                cp.write_row(link)
        for sql in _FINISH:
            cur.execute(sql.format(p=int(pk), collate=' COLLATE "C"'))
            while cur.fetchmany(5000):
                pass
    return n  # the connection block commits


def main(argv: list[str]) -> None:
    mode, path, base_file = argv[0], argv[1], argv[2]
    base = orjson.loads(Path(base_file).read_bytes())
    dataset_id = base.pop("__dataset_id")
    first: list[str] = []

    def watched() -> Iterator[tuple[str, str, str]]:
        for row in rows(path, base, dataset_id):
            if len(first) < 3:
                first.append(row[1])
            yield row

    if mode == "sqlite":
        n = to_sqlite(watched(), argv[3])
    elif mode == "copy":
        n = to_postgres(watched(), argv[3])
    elif mode == "schema":
        n = to_schema_sqlite(watched(), argv[3])
    elif mode == "schema-pg":
        n = to_schema_postgres(watched(), argv[3])
    else:
        n = sum(1 for _ in watched())
    sys.stdout.write(orjson.dumps({"rows": n, "first": first}).decode() + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
