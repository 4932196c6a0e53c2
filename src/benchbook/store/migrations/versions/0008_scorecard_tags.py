"""scorecard tags: movable labels (baseline, prod) naming one scorecard per dataset id

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01 22:00:00.000000

SPEC H.7 / issue 11 item 3: a scorecard can be tagged like a dataset version; a tag names at
most one scorecard per (workspace, dataset id), so ``compare --baseline TAG`` resolves it on the
candidate's dataset id. Tags are metadata beside the scorecard, never part of its summary.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "scorecard_tags",
        sa.Column("workspace", sa.String(length=64), nullable=False),
        sa.Column("dataset_id", sa.String(length=128), nullable=False),
        sa.Column("tag", sa.String(length=60), nullable=False),
        sa.Column("scorecard_id", sa.String(length=40), nullable=False),
        sa.Column("set_by", sa.String(length=200), nullable=False),
        sa.Column("set_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["workspace"], ["workspaces.id"]),
        sa.ForeignKeyConstraint(["scorecard_id"], ["scorecards.id"]),
        sa.PrimaryKeyConstraint("workspace", "dataset_id", "tag"),
    )
    op.create_index("ix_scorecard_tags_scorecard", "scorecard_tags", ["scorecard_id"])


def downgrade() -> None:
    op.drop_index("ix_scorecard_tags_scorecard", table_name="scorecard_tags")
    op.drop_table("scorecard_tags")
