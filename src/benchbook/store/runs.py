"""Runs repository: run rows (one evaluation of a harness version on a dataset version),
reading them by workspace, dataset and status, and updating them.

A run's results, scorecards, leases and judge verdicts have their own modules
(:mod:`~benchbook.store.run_results`, :mod:`~benchbook.store.result_pages`,
:mod:`~benchbook.store.scorecards`, :mod:`~benchbook.store.run_leases`,
:mod:`~benchbook.store.judge_verdicts`); the names other packages read through this module are
re-exported here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, func, insert, or_, select, update

from benchbook.store.result_pages import iter_results as iter_results
from benchbook.store.result_pages import result_page as result_page
from benchbook.store.scorecards import SCORECARD_COLUMNS
from benchbook.store.scorecards import ScoreRow as ScoreRow
from benchbook.store.scorecards import scorecard_tags_of as scorecard_tags_of
from benchbook.store.scorecards import scores_of as scores_of
from benchbook.store.tables import runs, scorecards, utcnow

_R = runs.c
_S = scorecards.c


@dataclass(frozen=True)
class RunRow:
    """A stored run (JSON columns as text)."""

    id: str
    workspace: str
    dataset_pk: int
    dataset_id: str
    dataset_version: str
    dataset_content_hash: str
    harness_pk: int
    harness_ref: str
    harness_hash: str
    plan: str
    plan_hash: str
    settings: str
    status: str
    error: str | None
    total: int
    spent_usd: float
    scorecard_id: str | None
    cancel_requested: bool
    claimed_by: str | None
    heartbeat_at: datetime | None
    lease_expires_at: datetime | None
    reproducibility: str
    created_by: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    origin: str = "native"
    reported_by: str | None = None
    budget_caps: str | None = None  # [{budget_usd, set_by, set_at}] JSON


RUN_COLUMNS = tuple(runs.c[f] for f in RunRow.__dataclass_fields__)


def insert_run(conn: Connection, **values: Any) -> None:
    """Store a new run row (``values`` are the table's columns)."""
    conn.execute(
        insert(runs).values(spent_usd=0.0, cancel_requested=False, created_at=utcnow(), **values)
    )


def get_run(conn: Connection, run_id: str, workspace: str | None = None) -> RunRow | None:
    """The run, optionally only when it belongs to ``workspace``."""
    stmt = select(*RUN_COLUMNS).where(_R.id == run_id)
    if workspace is not None:
        stmt = stmt.where(_R.workspace == workspace)
    row = conn.execute(stmt).first()
    return RunRow(*row) if row is not None else None


def list_runs(
    conn: Connection,
    workspace: str,
    *,
    dataset_id: str | None = None,
    harness: str | None = None,
    status: str | None = None,
    dataset_pks: Sequence[int] | None = None,
    dataset_version: str | None = None,
    before: tuple[datetime, str] | None = None,
    limit: int = 50,
) -> list[RunRow]:
    """Runs of ``workspace``, newest first (``created_at``, then id), filtered; ``before`` is
    the ``(created_at, id)`` keyset of the last run of the previous page."""
    stmt = select(*RUN_COLUMNS).where(_R.workspace == workspace)
    if dataset_id is not None:
        stmt = stmt.where(_R.dataset_id == dataset_id)
    if dataset_version is not None:
        stmt = stmt.where(_R.dataset_version == dataset_version)
    if before is not None:
        at, rid = before
        stmt = stmt.where(or_(_R.created_at < at, and_(_R.created_at == at, _R.id < rid)))
    if harness is not None:
        cond = (
            _R.harness_ref == harness
            if "@" in harness
            else _R.harness_ref.startswith(f"{harness}@", autoescape=True)
        )
        stmt = stmt.where(cond)
    if status is not None:
        stmt = stmt.where(_R.status == status)
    if dataset_pks is not None:
        stmt = stmt.where(_R.dataset_pk.in_(list(dataset_pks)))
    stmt = stmt.order_by(_R.created_at.desc(), _R.id.desc()).limit(limit)
    return [RunRow(*r) for r in conn.execute(stmt)]


def dataset_run_summaries(
    conn: Connection, workspace: str, dataset_ids: Sequence[str]
) -> dict[str, tuple[int, str | None, str | None]]:
    """``{dataset_id: (runs, last finished run id, its scorecard summary JSON or None)}`` for
    the given dataset ids of ``workspace`` (ids without runs are absent). Two queries."""
    if not dataset_ids:
        return {}
    ids = list(dataset_ids)
    counted = (
        select(_R.dataset_id, func.count())
        .where(_R.workspace == workspace, _R.dataset_id.in_(ids))
        .group_by(_R.dataset_id)
    )
    out: dict[str, tuple[int, str | None, str | None]] = {
        d: (int(n), None, None) for d, n in conn.execute(counted)
    }
    rank = (
        func.row_number()
        .over(partition_by=_R.dataset_id, order_by=(_R.created_at.desc(), _R.id.desc()))
        .label("rank")
    )
    ranked = (
        select(_R.dataset_id, _R.id, _S.summary, rank)
        .select_from(runs.outerjoin(scorecards, _S.id == _R.scorecard_id))
        .where(_R.workspace == workspace, _R.dataset_id.in_(ids), _R.status == "finished")
        .subquery()
    )
    last = select(ranked.c.dataset_id, ranked.c.id, ranked.c.summary).where(ranked.c.rank == 1)
    for dataset_id, run_id, summary in conn.execute(last):
        out[dataset_id] = (out[dataset_id][0], run_id, summary)
    return out


def set_run(conn: Connection, run_id: str, **values: Any) -> None:
    """Update columns of one run."""
    conn.execute(update(runs).where(_R.id == run_id).values(**values))


def dataset_scorecards(
    conn: Connection, workspace: str, dataset_id: str | None, statuses: Sequence[str], limit: int
) -> list[tuple[Any, RunRow]]:
    """``(scorecard header, run)`` of the scorecards of ``dataset_id``'s runs (any dataset's
    when None) in ``workspace`` whose status is one of ``statuses``, newest scorecard first
    (headers as :func:`get_scorecard`). Two queries, whatever the number of results."""
    runs_of = select(_R.id).where(_R.workspace == workspace, _R.status.in_(list(statuses)))
    if dataset_id is not None:
        runs_of = runs_of.where(_R.dataset_id == dataset_id)
    stmt = (
        select(*SCORECARD_COLUMNS)
        .where(_S.run_id.in_(runs_of.scalar_subquery()))
        .order_by(_S.created_at.desc(), _S.id.desc())
        .limit(limit)
    )
    heads = list(conn.execute(stmt))
    ids = sorted({h.run_id for h in heads})
    rows: list[Any] = list(conn.execute(select(*RUN_COLUMNS).where(_R.id.in_(ids)))) if ids else []
    by_id = {r.id: RunRow(*r) for r in rows}
    return [(h, by_id[h.run_id]) for h in heads]
