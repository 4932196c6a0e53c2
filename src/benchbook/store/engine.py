"""Engine creation and Alembic-driven migrations.

SQLite (the embedded default) runs in WAL mode with foreign keys on; PostgreSQL is used when
``DATABASE_URL`` points at it (``postgresql+psycopg://…``; plain ``postgresql://`` is accepted).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine, create_engine, event, insert, inspect, select, text
from sqlalchemy.engine import ExceptionContext, make_url

from benchbook.errors import Unavailable
from benchbook.store.pool_ping import ping_when_idle
from benchbook.store.sqlite_writers import NO_WAIT, busy_error, queue_writers
from benchbook.store.tables import DEFAULT_WORKSPACE, SHARED_WORKSPACE, utcnow, workspaces

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
SQLITE_BUSY_TIMEOUT_S = 30.0
"""Default wait of an SQLite write for the writer before giving up (``sqlite_busy_timeout_s``)."""


def normalize_url(url: str) -> str:
    """Use psycopg 3 for PostgreSQL URLs written without a driver."""
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def make_engine(
    url: str, busy_timeout_s: float = SQLITE_BUSY_TIMEOUT_S, *, writer_queue: bool = True
) -> Engine:
    """Create an engine; for SQLite, make the parent folder and set WAL + foreign keys.

    An SQLite write that waits ``busy_timeout_s`` for another writer (a long import) raises
    Unavailable (503 with ``Retry-After``) instead of ``OperationalError: database is
    locked``; reads never wait for a writer (WAL). Writers of one process wait for each other
    first come, first served (``store/sqlite_writers.py``), and that wait counts against
    ``busy_timeout_s``. ``writer_queue=False`` leaves them to SQLite's busy handler alone
    (for ``bench/sqlite_writers.py``, which measures the difference).
    """
    url = normalize_url(url)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"timeout": busy_timeout_s})
        event.listen(engine, "handle_error", _writer_busy)
        if writer_queue:
            queue_writers(engine, busy_timeout_s)

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()
            dbapi_conn.create_function("bb_lower", 1, _lower_text, deterministic=True)

        return engine
    engine = create_engine(url)
    ping_when_idle(engine)  # not pool_pre_ping: a round trip before every checkout
    return engine


def _lower_text(value: object) -> object:
    """SQLite's ``bb_lower``: Python's ``str.lower`` (SQLite's own ``lower`` folds ASCII only),
    so a search matches ``É`` with ``é`` on both backends."""
    return value.lower() if isinstance(value, str) else value


def _writer_busy(context: ExceptionContext) -> None:
    """SQLite's ``database is locked`` (the writer stayed busy past the timeout) → Unavailable,
    once for every caller of the store (SQLAlchemy's ``handle_error`` hook)."""
    if isinstance(context.original_exception, Unavailable):  # the writer queue's own refusal
        return
    message = str(context.original_exception)
    if "database is locked" in message or "database is busy" in message:
        raise busy_error() from context.original_exception


def try_write(engine: Engine, write: Callable[[Connection], None]) -> bool:
    """Run one short bookkeeping ``write`` in its own transaction, giving up at once (False)
    when SQLite's single writer is busy — e.g. a long import, or another thread of this
    process holding or waiting for it (the writer queue) — instead of waiting 30 s.

    For bookkeeping only (a key's last-use stamp): a request must never wait on it. Other
    backends lock rows, not the database, and simply run it.
    """
    if engine.dialect.name != "sqlite":
        with engine.begin() as conn:
            write(conn)
        return True
    with engine.connect() as conn:
        waits_ms = conn.exec_driver_sql("PRAGMA busy_timeout").scalar_one()
        conn.exec_driver_sql("PRAGMA busy_timeout = 0")
        conn.info[NO_WAIT] = True
        try:
            write(conn)
            conn.commit()
            return True
        except Unavailable:
            conn.rollback()
            return False
        finally:
            conn.info.pop(NO_WAIT, None)
            conn.exec_driver_sql(f"PRAGMA busy_timeout = {int(waits_ms)}")
            conn.commit()


def truncate_log(engine: Engine) -> None:
    """Give back the space a rolled-back write left in SQLite's write-ahead log (``PRAGMA
    wal_checkpoint(TRUNCATE)``): a failed or cancelled import of many rows spills them into the
    log, which otherwise keeps its size. Best effort: skipped while another connection holds
    the log. PostgreSQL reclaims rolled-back rows by (auto)vacuum."""
    if engine.dialect.name != "sqlite":
        return
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    except Unavailable:
        pass


def advisory_lock(conn: Connection, key: str) -> None:
    """Hold ``key`` until this transaction ends, so writers of the same key run one after the
    other (PostgreSQL: ``pg_advisory_xact_lock``, taken again at no cost; SQLite already has
    one writer at a time)."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(hashtextextended(:key, 15))"), {"key": key})


def alembic_config(engine: Engine) -> Config:
    """An Alembic config bound to ``engine`` (no ini file needed)."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.attributes["engine"] = engine
    return cfg


_REVISION = re.compile(r'^(down_)?revision(?:: [^=]+)? = "([^"]+)"', re.MULTILINE)


@cache
def head_revision() -> str | None:
    """The newest migration's revision id, read from ``migrations/versions/*.py`` without
    importing Alembic (~0.1 s); None unless the files form exactly one head."""
    revisions: set[str] = set()
    parents: set[str] = set()
    for path in (MIGRATIONS_DIR / "versions").glob("*.py"):
        for down, rev in _REVISION.findall(path.read_text(encoding="utf-8")):
            (parents if down else revisions).add(rev)
    heads = revisions - parents
    return heads.pop() if len(heads) == 1 else None


def _at_head(engine: Engine) -> bool:
    """True when the database records exactly the head revision and both built-in
    workspaces exist: then :func:`migrate` has nothing to do."""
    head = head_revision()
    if head is None:
        return False
    with engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return False
        versions = list(conn.scalars(text("SELECT version_num FROM alembic_version")))
        if versions != [head]:
            return False
        have = set(conn.scalars(select(workspaces.c.id)))
    return {DEFAULT_WORKSPACE, SHARED_WORKSPACE} <= have


#: ``pg_advisory_lock`` key serializing migrations of servers starting at once on one database.
MIGRATION_LOCK = 0x6265_6E63_6862_6B  # "benchbk"


def migrate(engine: Engine) -> None:
    """Upgrade the schema to head and make sure the built-in workspaces exist.

    On PostgreSQL the whole step holds an advisory lock, so replicas started together on one
    database migrate one after the other (the later ones find it at head) instead of racing.
    A database already at head with both workspaces is left alone without taking the lock or
    importing Alembic.
    """
    if _at_head(engine):
        return
    if engine.dialect.name != "postgresql":
        _migrate(engine)
        return
    with engine.connect() as lock:
        lock.exec_driver_sql(f"SELECT pg_advisory_lock({MIGRATION_LOCK})")
        try:
            _migrate(engine)
        finally:
            lock.exec_driver_sql(f"SELECT pg_advisory_unlock({MIGRATION_LOCK})")
            lock.commit()


def _migrate(engine: Engine) -> None:
    from alembic import command

    command.upgrade(alembic_config(engine), "head")
    with engine.begin() as conn:
        seed_workspaces(conn)


def seed_workspaces(conn: Connection) -> None:
    """Insert the built-in workspaces ``default`` and ``_shared`` where they are missing."""
    have = set(conn.scalars(select(workspaces.c.id)))
    for ws, name in ((DEFAULT_WORKSPACE, "Default"), (SHARED_WORKSPACE, "Shared")):
        if ws not in have:
            conn.execute(insert(workspaces).values(id=ws, name=name, created_at=utcnow()))
