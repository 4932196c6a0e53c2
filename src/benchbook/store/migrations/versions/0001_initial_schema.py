"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-29 22:37:35.075428
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:

    op.create_table(
        "case_bodies",
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("hash"),
    )
    op.create_table(
        "events",
        sa.Column(
            "pk",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("workspace", sa.String(length=64), nullable=False),
        sa.Column("resource_type", sa.String(length=32), nullable=False),
        sa.Column("resource_id", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("actor", sa.String(length=200), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("details", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("pk"),
    )
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.create_index(
            "ix_events_resource", ["workspace", "resource_type", "resource_id"], unique=False
        )

    op.create_table(
        "workspaces",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "dataset_versions",
        sa.Column(
            "pk",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("workspace", sa.String(length=64), nullable=False),
        sa.Column("dataset_id", sa.String(length=128), nullable=False),
        sa.Column("version", sa.String(length=128), nullable=False),
        sa.Column("is_prerelease", sa.Boolean(), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("tags", sa.Text(), nullable=False),
        sa.Column("produced_by", sa.Text(), nullable=True),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("case_count", sa.Integer(), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("deleted_by", sa.String(length=200), nullable=True),
        sa.ForeignKeyConstraint(
            ["workspace"],
            ["workspaces.id"],
        ),
        sa.PrimaryKeyConstraint("pk"),
        sa.UniqueConstraint("workspace", "dataset_id", "version", name="uq_dataset_versions_key"),
    )
    with op.batch_alter_table("dataset_versions", schema=None) as batch_op:
        batch_op.create_index(
            "ix_dataset_versions_ws_live", ["workspace", "deleted_at"], unique=False
        )

    op.create_table(
        "version_cases",
        sa.Column(
            "version_pk", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.String(length=512), nullable=False),
        sa.Column("case_hash", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(
            ["version_pk"],
            ["dataset_versions.pk"],
        ),
        sa.PrimaryKeyConstraint("version_pk", "position"),
    )
    with op.batch_alter_table("version_cases", schema=None) as batch_op:
        batch_op.create_index("ix_version_cases_case_id", ["version_pk", "case_id"], unique=False)

    op.create_table(
        "version_tags",
        sa.Column("workspace", sa.String(length=64), nullable=False),
        sa.Column("dataset_id", sa.String(length=128), nullable=False),
        sa.Column("tag", sa.String(length=60), nullable=False),
        sa.Column(
            "version_pk", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("set_by", sa.String(length=200), nullable=False),
        sa.Column("set_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["version_pk"],
            ["dataset_versions.pk"],
        ),
        sa.PrimaryKeyConstraint("workspace", "dataset_id", "tag"),
    )


def downgrade() -> None:

    op.drop_table("version_tags")
    with op.batch_alter_table("version_cases", schema=None) as batch_op:
        batch_op.drop_index("ix_version_cases_case_id")

    op.drop_table("version_cases")
    with op.batch_alter_table("dataset_versions", schema=None) as batch_op:
        batch_op.drop_index("ix_dataset_versions_ws_live")

    op.drop_table("dataset_versions")
    op.drop_table("workspaces")
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.drop_index("ix_events_resource")

    op.drop_table("events")
    op.drop_table("case_bodies")
