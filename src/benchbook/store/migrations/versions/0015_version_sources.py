"""version sources: the import keys a version was read under

Revision ID: 0015_version_sources
Revises: 0014_agent_limits
Create Date: 2026-12-04 17:30:00.000000

Issue 32: an identical re-import of an unchanged file is decided from the file's sha256 and
everything else that shapes the rows (``datasets/import_key.py``) without building them. Each
version keeps the keys it was imported (or found identical) under; versions before this
revision have none, so their first re-import builds its rows as before and records one.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015_version_sources"
down_revision: str | None = "0014_agent_limits"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "version_sources",
        sa.Column(
            "version_pk",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            sa.ForeignKey("dataset_versions.pk"),
            primary_key=True,
        ),
        sa.Column("import_key", sa.String(64), primary_key=True),
    )


def downgrade() -> None:
    op.drop_table("version_sources")
