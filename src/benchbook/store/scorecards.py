"""Scorecards: a run's own scorecard and its rescores (headers, score rows, summaries), and the
movable tags (``baseline``, ``prod``) that name one scorecard per dataset id and workspace."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, delete, insert, or_, select, update

from benchbook.store.tables import scorecard_scores, scorecard_tags, scorecards, utcnow

_S = scorecards.c
_SS = scorecard_scores.c
_T = scorecard_tags.c


ScoreRow = tuple[str, int, bool | None, str, str | None]
"""One scorecard row: ``(case_id, sample, passed, scores JSON, grader_error)``."""


_INSERT_SCORES = insert(scorecard_scores)  # built once, executed with a list of rows


def write_scores(conn: Connection, scorecard_id: str, rows: Sequence[ScoreRow]) -> None:
    """Insert ``(case_id, sample, passed, scores JSON, grader_error)`` rows of one scorecard."""
    if rows:
        conn.execute(
            _INSERT_SCORES,
            [
                {
                    "scorecard_id": scorecard_id,
                    "case_id": c,
                    "sample": s,
                    "passed": p,
                    "scores": j,
                    "grader_error": g,
                }
                for c, s, p, j, g in rows
            ],
        )


SCORECARD_COLUMNS = (
    _S.id,
    _S.run_id,
    _S.plan,
    _S.plan_hash,
    _S.rescore_of,
    _S.summary,
    _S.created_by,
    _S.created_at,
)


def insert_scorecard(conn: Connection, **values: Any) -> None:
    """Store a scorecard header."""
    conn.execute(insert(scorecards).values(created_at=utcnow(), **values))


def get_scorecard(conn: Connection, scorecard_id: str) -> Any | None:
    """``(id, run_id, plan, plan_hash, rescore_of, summary, created_by, created_at)``."""
    stmt = select(*SCORECARD_COLUMNS).where(_S.id == scorecard_id)
    return conn.execute(stmt).first()


def scorecards_of(conn: Connection, run_id: str) -> list[Any]:
    """The run's scorecards, oldest first (same columns as :func:`get_scorecard`)."""
    stmt = select(*SCORECARD_COLUMNS).where(_S.run_id == run_id).order_by(_S.created_at, _S.id)
    return list(conn.execute(stmt))


def set_scorecard_summary(conn: Connection, scorecard_id: str, summary: str) -> None:
    """Record a scorecard's computed summary JSON."""
    conn.execute(update(scorecards).where(_S.id == scorecard_id).values(summary=summary))


def scores_of(
    conn: Connection, scorecard_id: str
) -> dict[tuple[str, int], tuple[bool | None, str, str | None]]:
    """``(case_id, sample) → (passed, scores JSON, grader_error)`` for a scorecard."""
    stmt = select(_SS.case_id, _SS.sample, _SS.passed, _SS.scores, _SS.grader_error).where(
        _SS.scorecard_id == scorecard_id
    )
    return {(c, s): (p, j, g) for c, s, p, j, g in conn.execute(stmt)}


def scorecard_tags_of(conn: Connection, scorecard_ids: Sequence[str]) -> dict[str, list[str]]:
    """``{scorecard_id: [tag, …]}`` (tags sorted) for the given scorecards."""
    out: dict[str, list[str]] = {}
    if scorecard_ids:
        stmt = select(_T.scorecard_id, _T.tag).where(_T.scorecard_id.in_(list(scorecard_ids)))
        for sid, tag in conn.execute(stmt.order_by(_T.tag)):
            out.setdefault(sid, []).append(tag)
    return out


def scorecard_tags_of_workspace(
    conn: Connection, workspace: str, scorecard_ids: Sequence[str]
) -> dict[str, list[str]]:
    """:func:`scorecard_tags_of` limited to the tags ``workspace`` set."""
    out: dict[str, list[str]] = {}
    if scorecard_ids:
        stmt = select(_T.scorecard_id, _T.tag).where(
            _T.workspace == workspace, _T.scorecard_id.in_(list(scorecard_ids))
        )
        for sid, tag in conn.execute(stmt.order_by(_T.tag)):
            out.setdefault(sid, []).append(tag)
    return out


def resolve_scorecard_tag(
    conn: Connection, workspace: str, dataset_id: str, tag: str
) -> str | None:
    """The scorecard a tag names for one dataset id in one workspace, or None."""
    stmt = select(_T.scorecard_id).where(
        _T.workspace == workspace, _T.dataset_id == dataset_id, _T.tag == tag
    )
    value = conn.execute(stmt).scalar()
    return str(value) if value is not None else None


def replace_scorecard_tags(
    conn: Connection,
    workspace: str,
    dataset_id: str,
    scorecard_id: str,
    tags: Sequence[str],
    actor: str,
) -> None:
    """Make ``tags`` exactly the scorecard's tags, moving any tag held by another scorecard of
    the same dataset id."""
    conn.execute(
        delete(scorecard_tags).where(
            _T.workspace == workspace,
            _T.dataset_id == dataset_id,
            or_(_T.scorecard_id == scorecard_id, _T.tag.in_(list(tags))),
        )
    )
    if tags:
        now = utcnow()
        rows = [
            {
                "workspace": workspace,
                "dataset_id": dataset_id,
                "tag": tag,
                "scorecard_id": scorecard_id,
                "set_by": actor,
                "set_at": now,
            }
            for tag in tags
        ]
        conn.execute(insert(scorecard_tags), rows)
