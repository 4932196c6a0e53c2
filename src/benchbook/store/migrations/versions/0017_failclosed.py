"""fail closed: grader errors apart from harness errors; budget caps a run was given

Revision ID: 0017_failclosed
Revises: 0016_code_and_endpoints
Create Date: 2026-12-04 16:30:00.000000

Issue 28: a (case, sample) whose grader could not give a verdict (an error, an unparseable or
incomplete judge reply) is a *grader error*, counted apart from the harness's errors:
``case_results.grader_error`` (the run's own scorecard) and ``scorecard_scores.grader_error``
(a rescore) hold what failed, null when grading decided. ``runs.budget_caps`` is the JSON list
``[{budget_usd, set_by, set_at}]`` of the caps given on resume and retry (null: only the start
settings' cap). Rows written before this revision read as "no grader error", as they were
counted then.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017_failclosed"
down_revision: str | None = "0016_code_and_endpoints"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("case_results") as batch:
        batch.add_column(sa.Column("grader_error", sa.Text, nullable=True))
    with op.batch_alter_table("scorecard_scores") as batch:
        batch.add_column(sa.Column("grader_error", sa.Text, nullable=True))
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("budget_caps", sa.Text, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("budget_caps")
    with op.batch_alter_table("scorecard_scores") as batch:
        batch.drop_column("grader_error")
    with op.batch_alter_table("case_results") as batch:
        batch.drop_column("grader_error")
