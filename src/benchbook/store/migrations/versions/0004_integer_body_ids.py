"""case bodies under integer ids with a narrow hash-key index

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-29 23:30:00.000000

``case_bodies`` was keyed by the 64-character hex hash, so every imported body inserted a wide
key at a random place of one B-tree (the main cost of a large import). Bodies now append under an
integer ``id``; ``hash_key`` (the hash's first 8 bytes as a signed 64-bit integer) is indexed and
the full ``hash`` is compared on lookup, so a key shared by two hashes stores both.
``version_cases.case_hash`` becomes ``body_id``. Existing rows are copied; downgrade copies back.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_COPY_BATCH = 5000


def hash_key(hex_hash: str) -> int:
    """The first 8 bytes of a hex SHA-256 as a signed 64-bit integer (as ``store.datasets``)."""
    return int.from_bytes(bytes.fromhex(hex_hash[:16]), "big", signed=True)


def _set_aside(table: str) -> None:
    """Rename ``table`` to ``<table>_old`` (PostgreSQL: its primary key index too)."""
    op.rename_table(table, f"{table}_old")
    if op.get_bind().dialect.name == "postgresql":
        op.execute(f"ALTER INDEX {table}_pkey RENAME TO {table}_old_pkey")


def _version_cases(link: sa.Column) -> None:  # type: ignore[type-arg]
    op.create_table(
        "version_cases",
        sa.Column("version_pk", _PK, nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.String(length=512), nullable=False),
        link,
        sa.ForeignKeyConstraint(["version_pk"], ["dataset_versions.pk"]),
        sa.PrimaryKeyConstraint("version_pk", "position"),
    )


def _index_version_cases() -> None:
    op.create_index("ix_version_cases_case_id", "version_cases", ["version_pk", "case_id"])


def upgrade() -> None:
    op.drop_index("ix_version_cases_case_id", table_name="version_cases")
    _set_aside("case_bodies")
    _set_aside("version_cases")
    bodies = op.create_table(
        "case_bodies",
        sa.Column("id", _PK, autoincrement=True, nullable=False),
        sa.Column("hash_key", sa.BigInteger(), nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    assert bodies is not None
    conn = op.get_bind()
    old = sa.table("case_bodies_old", sa.column("hash"), sa.column("body"))
    batch: list[dict[str, object]] = []
    for h, body in conn.execute(sa.select(old.c.hash, old.c.body).order_by(old.c.hash)):
        batch.append({"hash_key": hash_key(h), "hash": h, "body": body})
        if len(batch) >= _COPY_BATCH:
            conn.execute(bodies.insert(), batch)
            batch.clear()
    if batch:
        conn.execute(bodies.insert(), batch)
    op.create_index("ix_case_bodies_hash_key", "case_bodies", ["hash_key"])
    _version_cases(sa.Column("body_id", _PK, nullable=False))
    op.execute(
        "INSERT INTO version_cases (version_pk, position, case_id, body_id)"
        " SELECT vc.version_pk, vc.position, vc.case_id, cb.id FROM version_cases_old vc"
        " JOIN case_bodies cb ON cb.hash = vc.case_hash"
    )
    op.drop_table("version_cases_old")
    op.drop_table("case_bodies_old")
    _index_version_cases()


def downgrade() -> None:
    op.drop_index("ix_version_cases_case_id", table_name="version_cases")
    op.drop_index("ix_case_bodies_hash_key", table_name="case_bodies")
    _set_aside("case_bodies")
    _set_aside("version_cases")
    op.create_table(
        "case_bodies",
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("hash"),
    )
    op.execute("INSERT INTO case_bodies (hash, body) SELECT hash, body FROM case_bodies_old")
    _version_cases(sa.Column("case_hash", sa.String(length=64), nullable=False))
    op.execute(
        "INSERT INTO version_cases (version_pk, position, case_id, case_hash)"
        " SELECT vc.version_pk, vc.position, vc.case_id, cb.hash FROM version_cases_old vc"
        " JOIN case_bodies_old cb ON cb.id = vc.body_id"
    )
    op.drop_table("version_cases_old")
    op.drop_table("case_bodies_old")
    _index_version_cases()
