"""import jobs: the share of the source read

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-03 12:30:00.000000

Issue 14 item 3: the wizard's progress bar shows a percentage for a JSONL or CSV upload, whose
row count is unknown until it is read: ``fraction`` (0.0-1.0) is bytes read of the file's size
(else rows read of the total), saved with the other progress columns so any server polling the
job can show it. Null for jobs before this revision and sources that cannot tell.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("import_jobs") as batch:
        batch.add_column(sa.Column("fraction", sa.Float, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("import_jobs") as batch:
        batch.drop_column("fraction")
