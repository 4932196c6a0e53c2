"""dataset heads: one row per (workspace, dataset id) with a live version

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-03 09:30:00.000000

Issue 15 item 5: the datasets list of a workspace with 10,000 ids × 3 versions loaded every
live version into Python (~3.5 s). ``dataset_heads`` keeps, per id with a live version, the
latest version's pk (highest release by SemVer precedence, else highest prerelease; ties go to
the oldest row), the live version count, the latest's case count, the newest live
``created_at`` and the oldest live pk; the store refreshes it with every version write. The
list and owner resolution read one row per id. Backfilled here from the live versions; the
"latest" rule is frozen here (not imported) so later code changes cannot alter history.
"""

from collections.abc import Sequence

import semver
import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_LIVE = (
    "SELECT pk, workspace, dataset_id, version, case_count, created_at FROM dataset_versions"
    " WHERE deleted_at IS NULL ORDER BY pk"
)


def upgrade() -> None:
    op.create_table(
        "dataset_heads",
        sa.Column("workspace", sa.String(64), nullable=False),
        sa.Column("dataset_id", sa.String(128), nullable=False),
        sa.Column("latest_pk", sa.BigInteger().with_variant(sa.Integer, "sqlite"), nullable=False),
        sa.Column("versions", sa.Integer, nullable=False),
        sa.Column("case_count", sa.Integer, nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("first_pk", sa.BigInteger().with_variant(sa.Integer, "sqlite"), nullable=False),
        sa.ForeignKeyConstraint(["workspace"], ["workspaces.id"]),
        sa.ForeignKeyConstraint(["latest_pk"], ["dataset_versions.pk"]),
        sa.PrimaryKeyConstraint("workspace", "dataset_id"),
    )
    groups: dict[tuple[str, str], list[sa.Row[tuple[object, ...]]]] = {}
    for row in op.get_bind().execute(sa.text(_LIVE)):
        groups.setdefault((row.workspace, row.dataset_id), []).append(row)
    out = []
    for (workspace, dataset_id), rows in groups.items():
        parsed = [semver.Version.parse(r.version) for r in rows]
        pool = [v for v in parsed if not v.prerelease] or parsed
        top = str(max(pool))  # max keeps the first of equals: the oldest row
        latest = next(r for r in rows if r.version == top)
        out.append(
            {
                "workspace": workspace,
                "dataset_id": dataset_id,
                "latest_pk": latest.pk,
                "versions": len(rows),
                "case_count": latest.case_count,
                "updated_at": max(r.created_at for r in rows),
                "first_pk": rows[0].pk,
            }
        )
    # Plain SQL: SQLite hands back created_at as stored text, which goes back as it came.
    insert = sa.text(
        "INSERT INTO dataset_heads (workspace, dataset_id, latest_pk, versions, case_count,"
        " updated_at, first_pk) VALUES (:workspace, :dataset_id, :latest_pk, :versions,"
        " :case_count, :updated_at, :first_pk)"
    )
    for start in range(0, len(out), 5000):
        op.get_bind().execute(insert, out[start : start + 5000])


def downgrade() -> None:
    op.drop_table("dataset_heads")
