"""leases and uploads in the database: several servers on one PostgreSQL (issue 13 item 2)

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02 00:00:00.000000

A run's holder writes when its claim lapses (``runs.lease_expires_at``) so any server can take
a run over once it does; import jobs record their holder and lease the same way so a job whose
server died is ended instead of staying ``running``; ``worker_leases`` holds the one runs worker
an SQLite database allows; uploads of the import wizard are kept in the database
(``uploads`` + ``upload_chunks``) so a preview or an import can reach any replica.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("import_jobs") as batch:
        batch.add_column(sa.Column("claimed_by", sa.String(length=80), nullable=True))
        batch.add_column(sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True))
    op.create_table(
        "worker_leases",
        sa.Column("name", sa.String(length=40), nullable=False),
        sa.Column("holder", sa.String(length=80), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "uploads",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("workspace", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.String(length=200), nullable=False),
        sa.Column("name", sa.String(length=512), nullable=False),
        sa.Column("size_bytes", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["workspace"], ["workspaces.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_uploads_created", "uploads", ["created_at"])
    op.create_table(
        "upload_chunks",
        sa.Column("upload_id", sa.String(length=40), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(["upload_id"], ["uploads.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("upload_id", "seq"),
    )


def downgrade() -> None:
    op.drop_table("upload_chunks")
    op.drop_index("ix_uploads_created", table_name="uploads")
    op.drop_table("uploads")
    op.drop_table("worker_leases")
    with op.batch_alter_table("import_jobs") as batch:
        batch.drop_column("lease_expires_at")
        batch.drop_column("claimed_by")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("lease_expires_at")
