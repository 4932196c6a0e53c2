"""Dataset-version repository: SQL for versions, content-addressed case bodies, tags, pages.

Functions take an open ``Connection`` so callers own the transaction. Writes stream: case rows
arrive from an iterator and go to the database in batches; nothing holds a whole version.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import Connection, delete, func, insert, or_, select, update

from benchbook.store.case_writes import CaseRow as CaseRow
from benchbook.store.case_writes import write_cases as write_cases
from benchbook.store.dataset_heads import lock_dataset, refresh_heads, refresh_heads_of
from benchbook.store.tables import (
    case_bodies,
    dataset_versions,
    utcnow,
    version_cases,
    version_tags,
)


@dataclass(frozen=True)
class VersionRow:
    """A stored dataset version's metadata (no cases)."""

    pk: int
    workspace: str
    dataset_id: str
    version: str
    is_prerelease: bool
    description: str | None
    tags: list[str]
    produced_by: dict[str, Any] | None
    content_hash: str
    case_count: int
    created_by: str
    created_at: datetime
    deleted_at: datetime | None

    @property
    def live(self) -> bool:
        """True unless tombstoned."""
        return self.deleted_at is None


_V = dataset_versions.c


def version_row(r: Any) -> VersionRow:
    """A ``dataset_versions`` result row (any row with its columns) as a VersionRow."""
    return VersionRow(
        pk=r.pk,
        workspace=r.workspace,
        dataset_id=r.dataset_id,
        version=r.version,
        is_prerelease=bool(r.is_prerelease),
        description=r.description,
        tags=orjson.loads(r.tags),
        produced_by=orjson.loads(r.produced_by) if r.produced_by else None,
        content_hash=r.content_hash,
        case_count=r.case_count,
        created_by=r.created_by,
        created_at=r.created_at,
        deleted_at=r.deleted_at,
    )


def find_version(
    conn: Connection, workspace: str, dataset_id: str, version: str
) -> VersionRow | None:
    """The version row, live or tombstoned, or None."""
    r = conn.execute(
        select(dataset_versions).where(
            _V.workspace == workspace, _V.dataset_id == dataset_id, _V.version == version
        )
    ).first()
    return version_row(r) if r else None


def live_versions(conn: Connection, workspace: str, dataset_id: str) -> list[VersionRow]:
    """Live versions of one id in one workspace, in insertion order."""
    rows = conn.execute(
        select(dataset_versions)
        .where(_V.workspace == workspace, _V.dataset_id == dataset_id, _V.deleted_at.is_(None))
        .order_by(_V.pk)
    )
    return [version_row(r) for r in rows]


def insert_version_header(
    conn: Connection,
    *,
    workspace: str,
    dataset_id: str,
    version: str,
    is_prerelease: bool,
    description: str | None,
    tags: list[str],
    produced_by: dict[str, Any] | None,
    created_by: str,
) -> int:
    """Insert the version row with a placeholder hash; returns its primary key."""
    result = conn.execute(
        insert(dataset_versions).values(
            workspace=workspace,
            dataset_id=dataset_id,
            version=version,
            is_prerelease=is_prerelease,
            description=description,
            tags=orjson.dumps(tags).decode(),
            produced_by=orjson.dumps(produced_by, option=orjson.OPT_SORT_KEYS).decode()
            if produced_by is not None
            else None,
            content_hash="",
            case_count=0,
            created_by=created_by,
            created_at=utcnow(),
        )
    )
    pk = result.inserted_primary_key
    assert pk is not None
    return int(pk[0])


def finish_version(conn: Connection, pk: int, content_hash: str, case_count: int) -> None:
    """Record the content hash and case count once every case is written; the id's
    ``dataset_heads`` row follows."""
    conn.execute(
        update(dataset_versions)
        .where(_V.pk == pk)
        .values(content_hash=content_hash, case_count=case_count)
    )
    refresh_heads_of(conn, [pk])


def duplicate_case_ids(
    conn: Connection, version_pk: int, limit: int = 20
) -> list[tuple[str, list[int]]]:
    """Case ids stored more than once in a version, with their 0-based positions."""
    vc = version_cases.c
    dup_ids = (
        select(vc.case_id)
        .where(vc.version_pk == version_pk)
        .group_by(vc.case_id)
        .having(func.count() > 1)
        .limit(limit)
    ).subquery()
    rows = conn.execute(
        select(vc.case_id, vc.position)
        .where(vc.version_pk == version_pk, vc.case_id.in_(select(dup_ids.c.case_id)))
        .order_by(vc.position)
    )
    found: dict[str, list[int]] = {}
    for case_id, pos in rows:
        found.setdefault(case_id, []).append(pos)
    return list(found.items())


def _driver_rows(conn: Connection, sql: str, params: Sequence[Any]) -> list[Any]:
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
    rows = _driver_rows(conn, _PAGE_SQL, (version_pk, start, start + limit, limit))
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
    sizes = _driver_rows(conn, _SIZES_SQL, (version_pk, start, start + limit, limit))
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


def case_hashes_by_id(
    conn: Connection, version_pk: int, chunk: int = 5000
) -> Iterator[list[tuple[str, str]]]:
    """``(case_id, case_hash)`` of a version sorted by case id in code point order (the version
    content hash's order), in lists of up to ``chunk`` pairs. PostgreSQL compares with the ``C``
    collation, byte order of UTF-8, which is code point order; SQLite's default ``BINARY``
    collation is the same. Read on the DBAPI cursor (a server-side cursor on PostgreSQL), so a
    million-case version never sits in memory and no row passes through SQLAlchemy."""
    raw = conn.connection.driver_connection
    sql = (
        "SELECT vc.case_id, cb.hash FROM version_cases vc"
        " JOIN case_bodies cb ON cb.id = vc.body_id WHERE vc.version_pk = ? ORDER BY vc.case_id"
    )
    if conn.dialect.name == "postgresql":
        sql = sql.replace("?", "%s") + ' COLLATE "C"'
        cur = raw.cursor(name="bb_case_hashes_by_id")  # type: ignore[union-attr]
    else:
        cur = raw.cursor()  # type: ignore[union-attr]
    try:
        cur.execute(sql, (version_pk,))
        while rows := cur.fetchmany(chunk):
            yield rows
    finally:
        cur.close()


def body_index(conn: Connection, version_pk: int) -> dict[str, tuple[int, int]]:
    """``{case_id: (position, body_id)}`` of a version (for diffs): bodies are stored once per
    hash, so equal body ids mean equal case hashes. ~0.1 s per 100k cases."""
    rows = _driver_rows(
        conn,
        "SELECT case_id, position, body_id FROM version_cases WHERE version_pk = ?",
        (version_pk,),
    )
    return {cid: (pos, body_id) for cid, pos, body_id in rows}


# Candidate cases that are new or hold another body, then base cases whose id is gone: both walk
# one version by position and probe the other through the ``(version_pk, case_id)`` index.
_DIFF_CANDIDATE_SQL = (
    "SELECT c.case_id, c.position, c.body_id, b.position, b.body_id FROM version_cases c"
    " LEFT JOIN version_cases b ON b.version_pk = ? AND b.case_id = c.case_id"
    " WHERE c.version_pk = ? AND (b.body_id IS NULL OR b.body_id <> c.body_id)"
)
_DIFF_REMOVED_SQL = (
    "SELECT b.case_id, b.position, b.body_id FROM version_cases b WHERE b.version_pk = ?"
    " AND NOT EXISTS (SELECT 1 FROM version_cases c"
    "  WHERE c.version_pk = ? AND c.case_id = b.case_id)"
)


def diff_index(
    conn: Connection, base_pk: int, candidate_pk: int
) -> tuple[dict[str, tuple[int, int]], dict[str, tuple[int, int]], int]:
    """Only what differs between two versions, compared in SQL:
    ``(base {case_id: (position, body_id)} of removed and changed cases, candidate index of added
    and changed cases, number of unchanged cases)``. Unchanged cases never reach Python
    (~0.1-0.2 s for two 100k-case versions)."""
    base: dict[str, tuple[int, int]] = {}
    candidate: dict[str, tuple[int, int]] = {}
    for cid, pos, body_id, b_pos, b_body in _driver_rows(
        conn, _DIFF_CANDIDATE_SQL, (base_pk, candidate_pk)
    ):
        candidate[cid] = (pos, body_id)
        if b_body is not None:
            base[cid] = (b_pos, b_body)
    for cid, pos, body_id in _driver_rows(conn, _DIFF_REMOVED_SQL, (base_pk, candidate_pk)):
        base[cid] = (pos, body_id)
    total = _driver_rows(
        conn, "SELECT count(*) FROM version_cases WHERE version_pk = ?", (candidate_pk,)
    )[0][0]
    return base, candidate, int(total) - len(candidate)


def bodies_for(conn: Connection, body_ids: Iterable[int]) -> dict[int, bytes]:
    """Bodies by id, fetched in chunks of 500."""
    want = list(dict.fromkeys(body_ids))
    out: dict[int, bytes] = {}
    for i in range(0, len(want), 500):
        part = want[i : i + 500]
        marks = ", ".join("?" * len(part))
        sql = f"SELECT id, body FROM case_bodies WHERE id IN ({marks})"
        out.update({bid: b.encode() for bid, b in _driver_rows(conn, sql, part)})
    return out


def set_deleted(conn: Connection, pks: Sequence[int], actor: str | None) -> None:
    """Tombstone (``actor`` given) or revive (``actor`` None) the versions; their ids'
    ``dataset_heads`` rows follow."""
    values: dict[str, Any] = (
        {"deleted_at": utcnow(), "deleted_by": actor}
        if actor is not None
        else {"deleted_at": None, "deleted_by": None}
    )
    conn.execute(update(dataset_versions).where(_V.pk.in_(list(pks))).values(**values))
    refresh_heads_of(conn, pks)


def tags_by_version(conn: Connection, workspace: str, dataset_id: str) -> dict[int, list[str]]:
    """``{version_pk: [tag, …]}`` for one dataset in one workspace."""
    t = version_tags.c
    out: dict[int, list[str]] = {}
    rows = conn.execute(
        select(t.version_pk, t.tag)
        .where(t.workspace == workspace, t.dataset_id == dataset_id)
        .order_by(t.tag)
    )
    for pk, tag in rows:
        out.setdefault(pk, []).append(tag)
    return out


def tags_of_versions(conn: Connection, version_pks: Sequence[int]) -> dict[int, list[str]]:
    """``{version_pk: [tag, …]}`` (tags sorted) for any versions, in one statement."""
    t = version_tags.c
    out: dict[int, list[str]] = {}
    if not version_pks:
        return out
    rows = conn.execute(
        select(t.version_pk, t.tag).where(t.version_pk.in_(list(version_pks))).order_by(t.tag)
    )
    for pk, tag in rows:
        out.setdefault(pk, []).append(tag)
    return out


def resolve_tag(conn: Connection, workspace: str, dataset_id: str, tag: str) -> int | None:
    """The version pk a tag points at, or None."""
    t = version_tags.c
    return conn.scalar(
        select(t.version_pk).where(
            t.workspace == workspace, t.dataset_id == dataset_id, t.tag == tag
        )
    )


def replace_tags(
    conn: Connection, workspace: str, dataset_id: str, version_pk: int, tags: list[str], actor: str
) -> None:
    """Make ``tags`` exactly the tags of the version, moving any tag held by a sibling; the
    id's ``dataset_heads`` row follows.

    Two writers of the same id run one after the other (:func:`lock_dataset`, taken before the
    delete): otherwise both delete, both insert, and the second insert of a tag violated
    ``version_tags_pkey`` on PostgreSQL (issue 32)."""
    lock_dataset(conn, workspace, dataset_id)
    t = version_tags.c
    conn.execute(
        delete(version_tags).where(
            t.workspace == workspace,
            t.dataset_id == dataset_id,
            or_(t.version_pk == version_pk, t.tag.in_(tags)),
        )
    )
    if tags:
        now = utcnow()
        conn.execute(
            insert(version_tags),
            [
                {
                    "workspace": workspace,
                    "dataset_id": dataset_id,
                    "tag": tag,
                    "version_pk": version_pk,
                    "set_by": actor,
                    "set_at": now,
                }
                for tag in tags
            ],
        )
    refresh_heads(conn, [(workspace, dataset_id)])  # the head's search text holds version tags
