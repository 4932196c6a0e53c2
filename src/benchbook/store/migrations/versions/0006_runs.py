"""harnesses, runs, case results, scorecards and the judge verdict cache

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 07:00:00.000000

SPEC H: harnesses are versioned like recipes (plus tombstones); a run is one row with its
resolved dataset/harness, plan and settings; every finished (case, sample) is one
``case_results`` row (trace compressed, or a file reference when large); scorecards hold a
run's scores under one plan (``scorecard_scores`` per (case, sample)); judge verdicts are cached
by (workspace, judge hash, input hash).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_PK = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "harnesses",
        sa.Column("pk", _PK, autoincrement=True, nullable=False),
        sa.Column("workspace", sa.String(length=64), nullable=False),
        sa.Column("harness_id", sa.String(length=128), nullable=False),
        sa.Column("version", sa.String(length=128), nullable=False),
        sa.Column("is_prerelease", sa.Boolean(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("deleted_at", _TS, nullable=True),
        sa.ForeignKeyConstraint(["workspace"], ["workspaces.id"]),
        sa.PrimaryKeyConstraint("pk"),
        sa.UniqueConstraint("workspace", "harness_id", "version", name="uq_harnesses_key"),
    )
    op.create_table(
        "runs",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("workspace", sa.String(length=64), nullable=False),
        sa.Column("dataset_pk", sa.BigInteger(), nullable=False),
        sa.Column("dataset_id", sa.String(length=128), nullable=False),
        sa.Column("dataset_version", sa.String(length=128), nullable=False),
        sa.Column("dataset_content_hash", sa.String(length=64), nullable=False),
        sa.Column("harness_pk", sa.BigInteger(), nullable=False),
        sa.Column("harness_ref", sa.String(length=260), nullable=False),
        sa.Column("harness_hash", sa.String(length=64), nullable=False),
        sa.Column("plan", sa.Text(), nullable=False),
        sa.Column("plan_hash", sa.String(length=64), nullable=False),
        sa.Column("settings", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("total", sa.BigInteger(), nullable=False),
        sa.Column("spent_usd", sa.Float(), nullable=False),
        sa.Column("scorecard_id", sa.String(length=40), nullable=True),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        sa.Column("claimed_by", sa.String(length=80), nullable=True),
        sa.Column("heartbeat_at", _TS, nullable=True),
        sa.Column("reproducibility", sa.Text(), nullable=False),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.Column("started_at", _TS, nullable=True),
        sa.Column("finished_at", _TS, nullable=True),
        sa.ForeignKeyConstraint(["workspace"], ["workspaces.id"]),
        sa.ForeignKeyConstraint(["dataset_pk"], ["dataset_versions.pk"]),
        sa.ForeignKeyConstraint(["harness_pk"], ["harnesses.pk"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_runs_workspace", "runs", ["workspace", "created_at"])
    op.create_index("ix_runs_dataset", "runs", ["dataset_pk"])
    op.create_index("ix_runs_status", "runs", ["status"])
    op.create_table(
        "case_results",
        sa.Column("run_id", sa.String(length=40), nullable=False),
        sa.Column("case_id", sa.String(length=512), nullable=False),
        sa.Column("sample", sa.Integer(), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=10), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("answer", sa.Text(), nullable=False),
        sa.Column("passed", sa.Boolean(), nullable=True),
        sa.Column("cost_usd", sa.Float(), nullable=True),
        sa.Column("input_tokens", sa.BigInteger(), nullable=False),
        sa.Column("output_tokens", sa.BigInteger(), nullable=False),
        sa.Column("duration_ms", sa.BigInteger(), nullable=False),
        sa.Column("trace", sa.LargeBinary(), nullable=True),
        sa.Column("trace_path", sa.Text(), nullable=True),
        sa.Column("trace_sha256", sa.String(length=64), nullable=True),
        sa.Column("finished_at", _TS, nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"]),
        sa.PrimaryKeyConstraint("run_id", "case_id", "sample"),
    )
    op.create_index("ix_case_results_order", "case_results", ["run_id", "position", "sample"])
    op.create_table(
        "scorecards",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("run_id", sa.String(length=40), nullable=False),
        sa.Column("plan", sa.Text(), nullable=False),
        sa.Column("plan_hash", sa.String(length=64), nullable=False),
        sa.Column("rescore_of", sa.String(length=40), nullable=True),
        sa.Column("summary", sa.Text(), nullable=True),
        sa.Column("created_by", sa.String(length=200), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_scorecards_run", "scorecards", ["run_id", "created_at"])
    op.create_table(
        "scorecard_scores",
        sa.Column("scorecard_id", sa.String(length=40), nullable=False),
        sa.Column("case_id", sa.String(length=512), nullable=False),
        sa.Column("sample", sa.Integer(), nullable=False),
        sa.Column("passed", sa.Boolean(), nullable=True),
        sa.Column("scores", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(["scorecard_id"], ["scorecards.id"]),
        sa.PrimaryKeyConstraint("scorecard_id", "case_id", "sample"),
    )
    op.create_table(
        "judge_verdicts",
        sa.Column("workspace", sa.String(length=64), nullable=False),
        sa.Column("judge_hash", sa.String(length=64), nullable=False),
        sa.Column("input_hash", sa.String(length=64), nullable=False),
        sa.Column("verdict", sa.Text(), nullable=False),
        sa.Column("created_at", _TS, nullable=False),
        sa.PrimaryKeyConstraint("workspace", "judge_hash", "input_hash"),
    )


def downgrade() -> None:
    op.drop_table("judge_verdicts")
    op.drop_table("scorecard_scores")
    op.drop_index("ix_scorecards_run", table_name="scorecards")
    op.drop_table("scorecards")
    op.drop_index("ix_case_results_order", table_name="case_results")
    op.drop_table("case_results")
    op.drop_index("ix_runs_status", table_name="runs")
    op.drop_index("ix_runs_dataset", table_name="runs")
    op.drop_index("ix_runs_workspace", table_name="runs")
    op.drop_table("runs")
    op.drop_table("harnesses")
