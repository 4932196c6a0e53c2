"""Reading a dataset version's cases: pages in position order, case-id search, one case and its
neighbours, and every body streamed for an export.

Hot paths run their SQL on the DBAPI cursor (:func:`driver_rows`), skipping SQLAlchemy's per-row
result processing.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence
from typing import Any

from sqlalchemy import Connection, or_, select

from benchbook.store.tables import case_bodies, version_cases


def driver_rows(conn: Connection, sql: str, params: Sequence[Any]) -> list[Any]:
    """All rows of ``sql`` (``?`` placeholders) run on the DBAPI cursor inside ``conn``'s
    transaction: hot read paths skip SQLAlchemy's per-row result processing (~3× faster)."""
    if conn.dialect.name == "postgresql":
        sql = sql.replace("?", "%s")
    cur = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]
    try:
        cur.execute(sql, tuple(params))
        return list(cur.fetchall())
    finally:
        cur.close()


# The page of positions is cut first, then joined: the plan never sorts bodies, even on a
# PostgreSQL table that has not been analyzed since a bulk load.
_PAGE_SQL = (
    "SELECT vc.position, vc.case_id, cb.body FROM"
    " (SELECT position, case_id, body_id FROM version_cases"
    "  WHERE version_pk = ? AND position > ? AND position <= ? ORDER BY position LIMIT ?) vc"
    " JOIN case_bodies cb ON cb.id = vc.body_id ORDER BY vc.position"
)


_SIZES_SQL = (
    "SELECT length(cb.body) FROM"
    " (SELECT position, body_id FROM version_cases"
    "  WHERE version_pk = ? AND position > ? AND position <= ? ORDER BY position LIMIT ?) vc"
    " JOIN case_bodies cb ON cb.id = vc.body_id ORDER BY vc.position"
)


def case_page(
    conn: Connection, version_pk: int, after: int | None, limit: int
) -> list[tuple[int, str, bytes]]:
    """Up to ``limit`` cases after position ``after`` (keyset): ``(position, case_id, body)``.

    Walks the ``(version_pk, position)`` primary key, so a page costs the same at any depth.
    Positions are dense (0…n-1, written in order), so the page is also bounded above by
    ``after + limit``: PostgreSQL then keeps the index range scan even without statistics on a
    freshly loaded table (without the bound it sorted the whole version: ~70 ms vs ~2 ms).
    """
    start = -1 if after is None else after
    rows = driver_rows(conn, _PAGE_SQL, (version_pk, start, start + limit, limit))
    return [(p, cid, body.encode()) for p, cid, body in rows]


def search_case_rows(
    conn: Connection, version_pk: int, needle: str, limit: int
) -> list[tuple[int, str, bytes]]:
    """Up to ``limit`` cases, in order, whose id or stored body contains ``needle``
    (case-insensitive: SQLite ``LIKE`` for ASCII, PostgreSQL ``ILIKE``; ``%``/``_``/``\\``
    escaped): ``(position, case_id,
    body)``: the body match finds the task text, and also the expected answer and metadata."""
    escaped = needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    pattern = f"%{escaped}%"
    vc = version_cases.c
    body = case_bodies.c.body

    def match(column: Any) -> Any:  # SQLite's LIKE ignores ASCII case; PostgreSQL's ILIKE
        if conn.dialect.name == "postgresql":
            return column.ilike(pattern, escape="\\")
        return column.like(pattern, escape="\\")

    rows = conn.execute(
        select(vc.position, vc.case_id, body)
        .join(case_bodies, case_bodies.c.id == vc.body_id)
        .where(
            vc.version_pk == version_pk,
            or_(match(vc.case_id), match(body)),
        )
        .order_by(vc.position)
        .limit(limit)
    ).all()
    return [(int(p), str(c), str(b).encode()) for p, c, b in rows]


def cases_fitting(
    conn: Connection, version_pk: int, after: int | None, limit: int, max_chars: int
) -> int:
    """How many of the next ``limit`` cases after ``after`` fit in ``max_chars`` body
    characters (at least one), from their lengths alone: no body is read."""
    start = -1 if after is None else after
    sizes = driver_rows(conn, _SIZES_SQL, (version_pk, start, start + limit, limit))
    total = 0
    for kept, (size,) in enumerate(sizes):
        total += int(size or 0)
        if total > max_chars:
            return max(1, kept)
    return limit


def case_by_id(conn: Connection, version_pk: int, case_id: str) -> bytes | None:
    """One case body by id, or None."""
    vc = version_cases.c
    body = conn.scalar(
        select(case_bodies.c.body)
        .join(case_bodies, case_bodies.c.id == vc.body_id)
        .where(vc.version_pk == version_pk, vc.case_id == case_id)
    )
    return body.encode() if body is not None else None


def case_neighbours(
    conn: Connection, version_pk: int, case_id: str
) -> tuple[int, str | None, str | None] | None:
    """``(position, previous id, next id)`` of ``case_id`` in a version (None when absent):
    one ``(version_pk, case_id)`` index lookup and two primary-key lookups."""
    vc = version_cases.c
    position = conn.scalar(
        select(vc.position).where(vc.version_pk == version_pk, vc.case_id == case_id).limit(1)
    )
    if position is None:
        return None
    around = conn.execute(
        select(vc.position, vc.case_id).where(
            vc.version_pk == version_pk, vc.position.in_([position - 1, position + 1])
        )
    ).all()
    ids = {int(p): str(c) for p, c in around}
    return int(position), ids.get(position - 1), ids.get(position + 1)


def iter_case_bodies(conn: Connection, version_pk: int, chunk: int = 5000) -> Iterator[bytes]:
    """Every case body (canonical JSON, UTF-8 bytes) of a version in position order, one at a
    time: the export's read (:func:`iter_body_batches`, batches of ``chunk``), so no body is
    sorted and one batch is in memory. Close the generator to release the statement early."""
    batches = iter_body_batches(conn, version_pk, chunk)
    try:
        for batch in batches:
            yield from batch
    finally:
        batches.close()


# One statement for a whole export: the position-ordered primary key of ``version_cases`` joined to
# each body by its key, so neither backend sorts bodies (the keyset page above sorts each page's
# bodies after the join: on SQLite a temp b-tree spilled to disk, ~half the export's time; an
# analyzed PostgreSQL hash-joined a scan of every stored body per page). SQLite returns the
# stored UTF-8 as bytes through ``CAST … AS BLOB`` (no decode and encode back); PostgreSQL reads
# through a server-side cursor (planned for a fast start: the ordered nested loop, where a plain
# query sorts every body on disk) with JIT off (past ~120k cases its cost estimate turns JIT on:
# ~0.25 s of compiling for a plain scan). PostgreSQL sends the ``text`` bodies in binary format,
# which for ``text`` is the stored UTF-8 itself, loaded as ``bytes`` (no decode and encode back).
_EXPORT_SQL = (
    "SELECT {body} FROM version_cases vc JOIN case_bodies cb ON cb.id = vc.body_id"
    " WHERE vc.version_pk = {param} AND vc.position > {param} ORDER BY vc.position"
)


def iter_body_batches(
    conn: Connection, version_pk: int, batch: int = 5000, after: int = -1
) -> Generator[list[bytes]]:
    """Every case body (canonical JSON, UTF-8 bytes) of a version in position order after the
    0-based position ``after`` (-1: from the first), in lists of up to ``batch`` bodies: one
    ``SELECT`` read with ``fetchmany`` on the DBAPI cursor (a named server-side cursor on
    PostgreSQL), so a version of any size holds one batch in memory.
    The statement stays open between batches inside ``conn``'s transaction (on SQLite a read
    snapshot: WAL writers are not blocked); close the generator to release it early."""
    raw = conn.connection.driver_connection
    is_pg = conn.dialect.name == "postgresql"
    if is_pg:
        from psycopg.types.string import ByteaBinaryLoader  # only a PostgreSQL export needs it

        pg = raw.cursor()  # type: ignore[union-attr]
        pg.execute("SET LOCAL jit = off")  # reverts with the transaction
        pg.close()
        cur = raw.cursor(name="bb_export_bodies", binary=True)  # type: ignore[union-attr]
        cur.adapters.register_loader("text", ByteaBinaryLoader)  # this cursor only
        sql = _EXPORT_SQL.format(body="cb.body", param="%s")
    else:
        cur = raw.cursor()  # type: ignore[union-attr]
        sql = _EXPORT_SQL.format(body="CAST(cb.body AS BLOB)", param="?")
    try:
        cur.execute(sql, (version_pk, after))
        while rows := cur.fetchmany(batch):
            yield [b for (b,) in rows]
    finally:
        cur.close()
