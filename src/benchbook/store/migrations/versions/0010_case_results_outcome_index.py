"""case results: a covering index for a run's counts

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02 00:30:00.000000

Issue 11 item 4: the run page and its progress poll count a run's results by status and verdict
and list its most frequent errors. ``(run_id, status, passed)`` answers both from the index
alone: 100k results counted in ~33 ms instead of ~180 ms on SQLite (``bench/run_page.py``).
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_case_results_outcome", "case_results", ["run_id", "status", "passed"])


def downgrade() -> None:
    op.drop_index("ix_case_results_outcome", table_name="case_results")
