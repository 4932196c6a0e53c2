"""The import keys recorded per version (``version_sources``, migration 0015): see
``datasets/import_key.py`` for what a key covers."""

from __future__ import annotations

from sqlalchemy import Connection, exists, insert, select

from benchbook.store.tables import version_sources


def has_import_key(conn: Connection, version_pk: int, key: str) -> bool:
    """Whether version ``version_pk`` was imported (or found identical) under ``key``."""
    vs = version_sources.c
    return bool(
        conn.scalar(select(exists().where(vs.version_pk == version_pk, vs.import_key == key)))
    )


def add_import_key(conn: Connection, version_pk: int, key: str) -> None:
    """Record ``key`` for version ``version_pk`` (nothing when it is recorded already)."""
    if not has_import_key(conn, version_pk, key):
        conn.execute(insert(version_sources).values(version_pk=version_pk, import_key=key))
