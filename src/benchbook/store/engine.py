"""Engine creation and Alembic-driven migrations.

SQLite (the embedded default) runs in WAL mode with foreign keys on; PostgreSQL is used when
``DATABASE_URL`` points at it (``postgresql+psycopg://…``; plain ``postgresql://`` is accepted).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event, insert, select
from sqlalchemy.engine import make_url

from benchbook.store.tables import DEFAULT_WORKSPACE, SHARED_WORKSPACE, utcnow, workspaces

MIGRATIONS_DIR = Path(__file__).parent / "migrations"


def normalize_url(url: str) -> str:
    """Use psycopg 3 for PostgreSQL URLs written without a driver."""
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def make_engine(url: str) -> Engine:
    """Create an engine; for SQLite, make the parent folder and set WAL + foreign keys."""
    url = normalize_url(url)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"timeout": 30})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()

        return engine
    return create_engine(url, pool_pre_ping=True)


def alembic_config(engine: Engine) -> Config:
    """An Alembic config bound to ``engine`` (no ini file needed)."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.attributes["engine"] = engine
    return cfg


def migrate(engine: Engine) -> None:
    """Upgrade the schema to head and make sure the built-in workspaces exist."""
    command.upgrade(alembic_config(engine), "head")
    with engine.begin() as conn:
        have = set(conn.scalars(select(workspaces.c.id)))
        for ws, name in ((DEFAULT_WORKSPACE, "Default"), (SHARED_WORKSPACE, "Shared")):
            if ws not in have:
                conn.execute(insert(workspaces).values(id=ws, name=name, created_at=utcnow()))
