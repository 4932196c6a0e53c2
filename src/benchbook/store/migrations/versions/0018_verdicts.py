"""verdict vectors: each scorecard's outcomes stored as one blob

Revision ID: 0018_verdicts
Revises: 0017_failclosed
Create Date: 2026-12-05 07:00:00.000000

Issue 32: the first view of a 100k-pair comparison read each side's outcomes with an ordered
100k-row query (~0.35 s a side). ``verdict_vectors`` keeps, per scorecard, its
``(case_id, sample, outcome)`` of every result in dataset order as one compressed blob
(``store/verdicts.py``) with the run's ``status|finished_at`` it was read at; a vector whose
stamp no longer matches (the run was resumed or retried) is read again from the rows. Nothing
is filled here: scorecards before this revision get their vector at their first comparison.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018_verdicts"
down_revision: str | None = "0017_failclosed"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "verdict_vectors",
        sa.Column("scorecard_id", sa.String(40), sa.ForeignKey("scorecards.id"), primary_key=True),
        sa.Column("run_stamp", sa.String(80), nullable=False),
        sa.Column("pairs", sa.BigInteger, nullable=False),
        sa.Column("vector", sa.LargeBinary, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("verdict_vectors")
