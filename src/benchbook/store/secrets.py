"""Secrets repository: encrypted values keyed by ``(scope, owner, name)``.

The store never sees plain values: callers pass ciphertext in and get ciphertext back.
``owner`` is a user id for ``user`` scope and a workspace id for ``workspace`` scope.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, delete, insert, select, update

from benchbook.store.tables import secrets, utcnow

_S = secrets.c


@dataclass(frozen=True)
class SecretRow:
    """A stored secret's metadata (no value)."""

    scope: str
    owner: str
    name: str
    updated_by: str
    updated_at: datetime
    hosts: str = "[]"  # JSON list of the hosts the value may be sent to


def put_secret(
    conn: Connection,
    scope: str,
    owner: str,
    name: str,
    ciphertext: str,
    actor: str,
    hosts: str = "[]",
) -> None:
    """Insert or replace a secret's ciphertext and hosts (JSON list text)."""
    key = (_S.scope == scope, _S.owner == owner, _S.name == name)
    now = utcnow()
    done = conn.execute(
        update(secrets)
        .where(*key)
        .values(ciphertext=ciphertext, updated_by=actor, updated_at=now, hosts=hosts)
    )
    if not done.rowcount:
        conn.execute(
            insert(secrets).values(
                scope=scope,
                owner=owner,
                name=name,
                ciphertext=ciphertext,
                updated_by=actor,
                updated_at=now,
                hosts=hosts,
            )
        )


def get_ciphertext(conn: Connection, scope: str, owner: str, name: str) -> str | None:
    """The stored ciphertext, or None."""
    found = get_record(conn, scope, owner, name)
    return found[0] if found is not None else None


def get_record(conn: Connection, scope: str, owner: str, name: str) -> tuple[str, str] | None:
    """``(ciphertext, hosts JSON text)``, or None."""
    q = select(_S.ciphertext, _S.hosts).where(_S.scope == scope, _S.owner == owner, _S.name == name)
    row = conn.execute(q).first()
    return (str(row[0]), str(row[1])) if row is not None else None


def list_secrets(conn: Connection, scope: str, owner: str) -> list[SecretRow]:
    """Secrets of one owner, by name (metadata only)."""
    q = (
        select(_S.scope, _S.owner, _S.name, _S.updated_by, _S.updated_at, _S.hosts)
        .where(_S.scope == scope, _S.owner == owner)
        .order_by(_S.name)
    )
    return [SecretRow(*r) for r in conn.execute(q)]


def delete_secret(conn: Connection, scope: str, owner: str, name: str) -> bool:
    """Delete a secret; False when there was none."""
    q = delete(secrets).where(_S.scope == scope, _S.owner == owner, _S.name == name)
    return bool(conn.execute(q).rowcount)
