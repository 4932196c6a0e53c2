"""Reads across runs: one case's results over the workspace's runs of a dataset id (keyset
pages, newest run first) and the cases whose verdict differs between results of the same
harness@version (flakiness). A verdict here is the run's own: ``status = ok and passed``."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, case, func, or_, select

from benchbook.store.tables import case_results, runs
from benchbook.store.tables import scorecard_scores as ss

_R = runs.c
_C = case_results.c


def case_history(
    conn: Connection,
    workspace: str,
    dataset_id: str,
    case_id: str,
    before: tuple[datetime, str, int] | None,
    limit: int,
) -> list[Any]:
    """``(run_id, harness_ref, dataset_version, created_at, sample, status, passed, error,
    scores, cost_usd, duration_ms)`` of ``case_id`` in ``workspace``'s runs of ``dataset_id``
    (any version; ``not_run`` left out), ordered by run ``(created_at, id)`` descending then
    sample, after the keyset ``before`` = ``(created_at, run_id, sample)`` of the last row
    shown. ``scores`` is the own scorecard's JSON. The runs are found first (an index on the
    workspace), each result by its primary key."""
    on = and_(ss.c.scorecard_id == _R.scorecard_id, ss.c.case_id == _C.case_id)
    stmt = (
        select(
            _R.id.label("run_id"),
            _R.harness_ref,
            _R.dataset_version,
            _R.created_at,
            _C.sample,
            _C.status,
            _C.passed,
            _C.error,
            ss.c.scores,
            _C.cost_usd,
            _C.duration_ms,
        )
        .select_from(
            runs.join(case_results, _C.run_id == _R.id).outerjoin(
                ss, and_(on, ss.c.sample == _C.sample)
            )
        )
        .where(
            _R.workspace == workspace,
            _R.dataset_id == dataset_id,
            _C.case_id == case_id,
            _C.status != "not_run",
        )
    )
    if before is not None:
        at, rid, sample = before
        stmt = stmt.where(
            or_(
                _R.created_at < at,
                and_(_R.created_at == at, _R.id < rid),
                and_(_R.created_at == at, _R.id == rid, _C.sample > sample),
            )
        )
    order = (_R.created_at.desc(), _R.id.desc(), _C.sample)
    return list(conn.execute(stmt.order_by(*order).limit(limit)))


def sibling_runs(conn: Connection, run_id: str, workspace: str) -> list[str]:
    """Ids of the workspace's other ended runs (finished, cancelled, budget exhausted) of the
    same harness@version on the same dataset version as ``run_id``."""
    me = runs.alias("me")
    stmt = select(_R.id).where(
        me.c.id == run_id,
        _R.workspace == workspace,
        _R.id != run_id,
        _R.harness_ref == me.c.harness_ref,
        _R.dataset_pk == me.c.dataset_pk,
        _R.status.in_(("finished", "cancelled", "budget_exhausted")),
    )
    return [str(r) for r in conn.execute(stmt).scalars()]


def _verdict() -> Any:
    return case((and_(_C.status == "ok", _C.passed.is_(True)), 1), else_=0)


def flaky_cases(conn: Connection, run_id: str, siblings: Sequence[str]) -> list[Any]:
    """``(case_id, in_samples, passed, results, runs)`` of the cases of ``run_id`` whose
    verdict differs across its own samples (``in_samples`` 1) or across ``run_id`` and
    ``siblings``, in case-id order. One grouped query over the runs' results."""
    ids = [run_id, *siblings]
    v = _verdict()
    mine = case((_C.run_id == run_id, v), else_=None)
    stmt = (
        select(
            _C.case_id,
            case((func.min(mine) != func.max(mine), 1), else_=0).label("in_samples"),
            func.sum(v).label("passed"),
            func.count().label("results"),
            func.count(func.distinct(_C.run_id)).label("runs"),
        )
        .where(_C.run_id.in_(ids), _C.status != "not_run")
        .group_by(_C.case_id)
        .having(func.min(v) != func.max(v))
        .having(func.max(case((_C.run_id == run_id, 1), else_=0)) == 1)
        .order_by(_C.case_id)
    )
    return list(conn.execute(stmt))


def flaky_case_ids(run_id: str, siblings: Sequence[str]) -> Any:
    """The case ids of :func:`flaky_cases` as a subquery (for a filtered results page)."""
    v = _verdict()
    return (
        select(_C.case_id)
        .where(_C.run_id.in_([run_id, *siblings]), _C.status != "not_run")
        .group_by(_C.case_id)
        .having(func.min(v) != func.max(v))
    )
