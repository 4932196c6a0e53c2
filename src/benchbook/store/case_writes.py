"""Writing a version's cases: content-addressed bodies and ordered links, batch by batch.

Bodies live once per SHA-256 in ``case_bodies`` under an integer id, found through the narrow
``hash_key`` index and confirmed by the full hash (migration 0004). Callers own the transaction
(``store.datasets`` re-exports :func:`write_cases`); nothing here holds more than one batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from sqlalchemy import Connection

BATCH_ROWS = 2000

#: One case ready to store: (case_id, canonical JSON body, sha256 hex of the body).
CaseRow = tuple[str, bytes, str]

_TWO_63, _TWO_64 = 1 << 63, 1 << 64


def hash_key(case_hash: str) -> int:
    """The ``case_bodies.hash_key`` of a hex SHA-256: its first 8 bytes as a signed 64-bit int."""
    key = int(case_hash[:16], 16)
    return key - _TWO_64 if key >= _TWO_63 else key


def write_cases(conn: Connection, version_pk: int, rows: Iterable[CaseRow]) -> Iterator[str]:
    """Store case rows in order, yielding each case hash after it is queued.

    A body is stored once per hash: each batch looks its hash keys up in one query (comparing the
    full hash, so a key shared by two hashes stores both) and appends only the new bodies under
    fresh integer ids; the ordered ``(position, case_id, body_id)`` rows go to
    ``version_cases``. SQLite writes with batched ``executemany`` on the driver cursor (the
    transaction already holds the write lock, so lookup-then-insert cannot race) and a larger
    page cache for the load; PostgreSQL ``COPY``s each batch into a staging table and merges it
    under a transaction-scoped advisory lock that serializes concurrent body merges. At most one
    batch (:data:`BATCH_ROWS`) is held in memory.
    """
    writer: _SqliteWriter | _PgWriter
    if conn.dialect.name == "postgresql":
        writer = _PgWriter(conn, version_pk)
    else:
        writer = _SqliteWriter(conn, version_pk)
    try:
        for case_id, body, case_hash in rows:
            writer.add(case_id, body, case_hash)
            yield case_hash
        writer.flush()
    finally:
        writer.close()


#: SQLite page cache for a bulk load, in KiB (the default is 2 MiB): keeps the ``hash_key`` and
#: ``case_id`` indexes hot while bodies stream past.
SQLITE_LOAD_CACHE_KIB = 65536
_LOOKUP_CHUNK = 500


class _SqliteWriter:
    def __init__(self, conn: Connection, version_pk: int) -> None:
        self.cur = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
        self.cache_size = self.cur.execute("PRAGMA cache_size").fetchone()[0]
        self.cur.execute(f"PRAGMA cache_size=-{SQLITE_LOAD_CACHE_KIB}")
        self.next_id = int(self.cur.execute("SELECT max(id) FROM case_bodies").fetchone()[0] or 0)
        self.pk = version_pk
        self.pos = 0
        self.batch: list[tuple[str, bytes, str]] = []

    def add(self, case_id: str, body: bytes, case_hash: str) -> None:
        self.batch.append((case_id, body, case_hash))
        if len(self.batch) >= BATCH_ROWS:
            self.flush()

    def _known(self, keys: list[int]) -> dict[str, int]:
        """``{hash: id}`` of stored bodies whose hash key is in ``keys``."""
        found: dict[str, int] = {}
        for i in range(0, len(keys), _LOOKUP_CHUNK):
            part = keys[i : i + _LOOKUP_CHUNK]
            sql = (
                f"SELECT hash, id FROM case_bodies WHERE hash_key IN ({', '.join('?' * len(part))})"
            )
            found.update(self.cur.execute(sql, part).fetchall())
        return found

    def flush(self) -> None:
        batch = self.batch
        if not batch:
            return
        keys = [hash_key(h) for _, _, h in batch]
        ids = self._known(list(set(keys)))
        new: list[tuple[int, int, str, str]] = []
        links: list[tuple[int, int, str, int]] = []
        pk, pos, next_id, known = self.pk, self.pos, self.next_id, ids.get
        for (case_id, body, case_hash), key in zip(batch, keys, strict=True):
            body_id = known(case_hash)
            if body_id is None:
                next_id += 1
                body_id = ids[case_hash] = next_id
                new.append((body_id, key, case_hash, body.decode()))
            links.append((pk, pos, case_id, body_id))
            pos += 1
        self.pos, self.next_id = pos, next_id
        self.cur.executemany(
            "INSERT INTO case_bodies (id, hash_key, hash, body) VALUES (?, ?, ?, ?)", new
        )
        self.cur.executemany(
            "INSERT INTO version_cases (version_pk, position, case_id, body_id)"
            " VALUES (?, ?, ?, ?)",
            links,
        )
        batch.clear()

    def close(self) -> None:
        self.cur.execute(f"PRAGMA cache_size={int(self.cache_size)}")
        self.cur.close()


#: The ``pg_advisory_xact_lock`` key that serializes body merges (any constant; "bbbodies").
PG_BODIES_LOCK = 0x6262626F64696573

_PG_MERGE_BODIES = (
    "INSERT INTO case_bodies (hash_key, hash, body)"
    " SELECT DISTINCT ON (s.hash) s.hash_key, s.hash, s.body FROM bb_stage_cases s"
    " WHERE NOT EXISTS (SELECT 1 FROM case_bodies c"
    "  WHERE c.hash_key = s.hash_key AND c.hash = s.hash)"
)
_PG_LINK_CASES = (
    "INSERT INTO version_cases (version_pk, position, case_id, body_id)"
    " SELECT %s, s.position, s.case_id, c.id FROM bb_stage_cases s"
    " JOIN case_bodies c ON c.hash_key = s.hash_key AND c.hash = s.hash"
)


class _PgWriter:
    """COPY each batch into a temp staging table, insert the bodies not stored yet, then link the
    version's rows to body ids with one join; the advisory lock (held to commit) keeps a
    concurrent import from storing the same new body twice."""

    def __init__(self, conn: Connection, version_pk: int) -> None:
        self.raw = conn.connection.driver_connection
        self.pk = version_pk
        self.pos = 0
        with self.raw.cursor() as cur:  # type: ignore[union-attr]
            cur.execute(
                "CREATE TEMP TABLE IF NOT EXISTS bb_stage_cases (position integer,"
                " case_id text, hash_key bigint, hash text, body text) ON COMMIT DELETE ROWS"
            )
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (PG_BODIES_LOCK,))
        self.buffer: list[tuple[int, str, int, str, str]] = []

    def add(self, case_id: str, body: bytes, case_hash: str) -> None:
        self.buffer.append((self.pos, case_id, hash_key(case_hash), case_hash, body.decode()))
        self.pos += 1
        if len(self.buffer) >= BATCH_ROWS * 5:
            self.flush()

    def flush(self) -> None:
        if not self.buffer:
            return
        with self.raw.cursor() as cur:  # type: ignore[union-attr]
            with cur.copy(
                "COPY bb_stage_cases (position, case_id, hash_key, hash, body) FROM STDIN"
            ) as cp:
                for row in self.buffer:
                    cp.write_row(row)
            cur.execute(_PG_MERGE_BODIES)
            cur.execute(_PG_LINK_CASES, (self.pk,))
            cur.execute("TRUNCATE bb_stage_cases")
        self.buffer.clear()

    def close(self) -> None:
        """Nothing to release: the staging table empties and the lock ends at commit."""
