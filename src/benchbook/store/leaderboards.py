"""Leaderboard reads: the finished scorecards of one dataset version in one workspace, in one
query whatever their number (the newest per harness@version and plan chosen in SQL by a window
function, on SQLite ≥ 3.25 and PostgreSQL alike)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, and_, exists, func, select

from benchbook.store.tables import runs, scorecard_tags, scorecards

_R = runs.c
_S = scorecards.c
_T = scorecard_tags.c


def finished_scorecards(
    conn: Connection,
    workspace: str,
    dataset_pk: int,
    *,
    latest_only: bool,
    tag: str | None = None,
    plan_prefix: str | None = None,
) -> list[Any]:
    """``(id, run_id, plan, plan_hash, rescore_of, summary, created_at, harness_ref,
    finished_at, settings)`` of every summarized scorecard of ``workspace``'s finished runs on the
    dataset version ``dataset_pk``, newest first.

    Args:
        latest_only: only the newest scorecard per (harness@version, plan hash).
        tag: only scorecards holding this tag (chosen before "newest").
        plan_prefix: only plan hashes starting with this text.
    """
    where = [
        _R.workspace == workspace,
        _R.dataset_pk == dataset_pk,
        _R.status == "finished",
        _S.summary.is_not(None),
    ]
    if tag is not None:
        where.append(exists().where(and_(_T.scorecard_id == _S.id, _T.tag == tag)))
    if plan_prefix:
        where.append(_S.plan_hash.startswith(plan_prefix, autoescape=True))
    order = (_S.created_at.desc(), _S.id.desc())
    cols = [
        _S.id,
        _S.run_id,
        _S.plan,
        _S.plan_hash,
        _S.rescore_of,
        _S.summary,
        _S.created_at,
        _R.harness_ref,
        _R.finished_at,
        _R.settings,
    ]
    source = scorecards.join(runs, _R.id == _S.run_id)
    if not latest_only:
        return list(conn.execute(select(*cols).select_from(source).where(*where).order_by(*order)))
    rank = func.row_number().over(partition_by=(_R.harness_ref, _S.plan_hash), order_by=order)
    ranked = select(*cols, rank.label("rank")).select_from(source).where(*where).subquery()
    stmt = (
        select(*(ranked.c[c.name] for c in cols))
        .where(ranked.c.rank == 1)
        .order_by(ranked.c.created_at.desc(), ranked.c.id.desc())
    )
    return list(conn.execute(stmt))
