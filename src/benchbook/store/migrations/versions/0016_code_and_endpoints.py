"""registered graders and environment recipes, model endpoints, secret hosts, run origin

Revision ID: 0016_code_and_endpoints
Revises: 0015_version_sources
Create Date: 2026-12-04 16:30:00.000000

Issue 27 items 2, 3 and 6: code a member's data names must be registered by an admin
(``registered_code``: graders and environment recipes, versioned like harnesses); model
endpoints are registered (``endpoints``); a secret lists the hosts it may be sent to
(``secrets.hosts``, JSON list; existing secrets get ``[]`` — sent nowhere until bound); a run
says where its results came from (``runs.origin`` ``native``|``reported``, ``reported_by``).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016_code_and_endpoints"
down_revision: str | None = "0015_version_sources"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_BIGPK = sa.BigInteger().with_variant(sa.Integer, "sqlite")


def upgrade() -> None:
    op.create_table(
        "registered_code",
        sa.Column("pk", _BIGPK, primary_key=True, autoincrement=True),
        sa.Column("noun", sa.String(16), nullable=False),  # grader | environment
        sa.Column("workspace", sa.String(64), sa.ForeignKey("workspaces.id"), nullable=False),
        sa.Column("item_id", sa.String(128), nullable=False),
        sa.Column("version", sa.String(128), nullable=False),
        sa.Column("is_prerelease", sa.Boolean, nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("created_by", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("deleted_at", sa.DateTime(timezone=True)),
        sa.UniqueConstraint("noun", "workspace", "item_id", "version", name="uq_registered_code"),
    )
    op.create_table(
        "endpoints",
        sa.Column("pk", _BIGPK, primary_key=True, autoincrement=True),
        sa.Column("workspace", sa.String(64), sa.ForeignKey("workspaces.id"), nullable=False),
        sa.Column("name", sa.String(128), nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("created_by", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("workspace", "name", name="uq_endpoints_name"),
    )
    with op.batch_alter_table("secrets") as batch:
        batch.add_column(sa.Column("hosts", sa.Text, nullable=False, server_default="[]"))
    with op.batch_alter_table("runs") as batch:
        batch.add_column(
            sa.Column("origin", sa.String(16), nullable=False, server_default="native")
        )
        batch.add_column(sa.Column("reported_by", sa.String(200)))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("reported_by")
        batch.drop_column("origin")
    with op.batch_alter_table("secrets") as batch:
        batch.drop_column("hosts")
    op.drop_table("endpoints")
    op.drop_table("registered_code")
