"""case bodies unique by full hash; the hash-key column goes

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30 00:10:00.000000

A UNIQUE index on ``case_bodies.hash`` lets concurrent PostgreSQL imports store a body with
``INSERT … ON CONFLICT (hash) DO NOTHING`` (waiting only on a transaction that inserted the very
same hash) instead of serializing every import behind one advisory lock. Lookups use that index,
so the narrow ``hash_key`` column and its index (migration 0004) are dropped. Bodies stored twice
under one hash (none should exist) are merged onto the lowest id first. Downgrade recomputes
``hash_key`` from ``hash``.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COPY_BATCH = 5000

_HAS_DUPLICATES = "SELECT 1 FROM case_bodies GROUP BY hash HAVING count(*) > 1 LIMIT 1"
_POINT_TO_FIRST = (
    "UPDATE version_cases SET body_id = (SELECT min(d.id) FROM case_bodies c"
    " JOIN case_bodies d ON d.hash_key = c.hash_key AND d.hash = c.hash"
    " WHERE c.id = version_cases.body_id)"
)
_DROP_LATER = (
    "DELETE FROM case_bodies WHERE EXISTS (SELECT 1 FROM case_bodies d"
    " WHERE d.hash_key = case_bodies.hash_key AND d.hash = case_bodies.hash"
    " AND d.id < case_bodies.id)"
)


def hash_key(hex_hash: str) -> int:
    """The first 8 bytes of a hex SHA-256 as a signed 64-bit integer (as migration 0004)."""
    return int.from_bytes(bytes.fromhex(hex_hash[:16]), "big", signed=True)


def upgrade() -> None:
    conn = op.get_bind()
    if conn.execute(sa.text(_HAS_DUPLICATES)).first() is not None:
        op.execute(_POINT_TO_FIRST)
        op.execute(_DROP_LATER)
    op.drop_index("ix_case_bodies_hash_key", table_name="case_bodies")
    with op.batch_alter_table("case_bodies") as batch:
        batch.drop_column("hash_key")
    op.create_index("uq_case_bodies_hash", "case_bodies", ["hash"], unique=True)


def downgrade() -> None:
    op.drop_index("uq_case_bodies_hash", table_name="case_bodies")
    with op.batch_alter_table("case_bodies") as batch:
        batch.add_column(sa.Column("hash_key", sa.BigInteger(), nullable=True))
    conn = op.get_bind()
    bodies = sa.table("case_bodies", sa.column("id"), sa.column("hash"), sa.column("hash_key"))
    update = (
        bodies.update()
        .where(bodies.c.id == sa.bindparam("b_id"))
        .values(hash_key=sa.bindparam("b_key"))
    )
    rows = conn.execute(sa.select(bodies.c.id, bodies.c.hash)).all()
    for i in range(0, len(rows), _COPY_BATCH):
        part = rows[i : i + _COPY_BATCH]
        conn.execute(update, [{"b_id": pk, "b_key": hash_key(h)} for pk, h in part])
    with op.batch_alter_table("case_bodies") as batch:
        batch.alter_column("hash_key", existing_type=sa.BigInteger(), nullable=False)
    op.create_index("ix_case_bodies_hash_key", "case_bodies", ["hash_key"])
