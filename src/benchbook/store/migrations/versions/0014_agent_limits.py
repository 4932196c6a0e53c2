"""case results: the agent limit that ended a case

Revision ID: 0014_agent_limits
Revises: 0013
Create Date: 2026-12-04 17:10:00.000000

Issue 33: an ``agent`` harness's case that ends at a limit (``steps``, ``messages``, ``tokens``,
``time``) is not an error; the scorecard counts these apart. ``case_results.agent_limit`` keeps
the trace's ``limit`` beside the other summary columns, so a scorecard is computed without
opening traces. NULL for every existing row (no agent ran before this revision).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014_agent_limits"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("case_results") as batch:
        batch.add_column(sa.Column("agent_limit", sa.String(16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("case_results") as batch:
        batch.drop_column("agent_limit")
