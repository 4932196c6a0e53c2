"""rescore verdicts: drop the stored verdict vectors of scorecards other than a run's own

Revision ID: 0019_rescore_verdicts
Revises: 0018_verdicts
Create Date: 2026-12-06 03:40:00.000000

Until this revision a result's verdict under a rescore (or an imported report's scorecard)
fell back to the run's own verdict where the scorecard's score row gave none: a rescore with
only measuring graders listed, compared and exported the original run's passes
(``store/result_pages.py: card_verdict``). The vectors stored for such scorecards hold those
borrowed verdicts; they are deleted here and read again from the rows at their next comparison.
The run's own scorecards' vectors were right and are kept.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0019_rescore_verdicts"
down_revision: str | None = "0018_verdicts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "DELETE FROM verdict_vectors WHERE scorecard_id NOT IN"
        " (SELECT scorecard_id FROM runs WHERE scorecard_id IS NOT NULL)"
    )


def downgrade() -> None:
    """Nothing to restore: the deleted vectors are rebuilt from the rows when needed."""
