"""recipes and import jobs

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30 10:00:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "recipes",
        sa.Column("pk", _PK, autoincrement=True, nullable=False),
        sa.Column("workspace", sa.String(length=64), nullable=False),
        sa.Column("recipe_id", sa.String(length=128), nullable=False),
        sa.Column("version", sa.String(length=128), nullable=False),
        sa.Column("is_prerelease", sa.Boolean(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["workspace"], ["workspaces.id"]),
        sa.PrimaryKeyConstraint("pk"),
        sa.UniqueConstraint("workspace", "recipe_id", "version", name="uq_recipes_key"),
    )
    op.create_table(
        "import_jobs",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("workspace", sa.String(length=64), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("request", sa.Text(), nullable=False),
        sa.Column("file_name", sa.String(length=512), nullable=True),
        sa.Column("rows_read", sa.BigInteger(), nullable=False),
        sa.Column("cases_built", sa.BigInteger(), nullable=False),
        sa.Column("total", sa.BigInteger(), nullable=True),
        sa.Column("result", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["workspace"], ["workspaces.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("import_jobs", schema=None) as batch_op:
        batch_op.create_index("ix_import_jobs_workspace", ["workspace", "created_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("import_jobs", schema=None) as batch_op:
        batch_op.drop_index("ix_import_jobs_workspace")
    op.drop_table("import_jobs")
    op.drop_table("recipes")
