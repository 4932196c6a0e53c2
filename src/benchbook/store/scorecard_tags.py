"""Who holds a scorecard tag: the question asked before a tag moves (SPEC H; issue 27).

A scorecard tag (``baseline``, ``prod``) names one scorecard per dataset id; setting it on one
scorecard takes it from another. Moving a tag away from a run another user started is an
admin's decision, so the service reads the holders first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, select

from benchbook.store.tables import runs, scorecard_tags, scorecards

_T = scorecard_tags.c


@dataclass(frozen=True)
class TagHolder:
    """A tag, the scorecard holding it, and the user who started that scorecard's run."""

    tag: str
    scorecard_id: str
    run_started_by: str


def tag_holders(
    conn: Connection, workspace: str, dataset_id: str, tags: Sequence[str]
) -> list[TagHolder]:
    """The scorecards of ``dataset_id`` in ``workspace`` holding any of ``tags`` (≤ 20 tags:
    one indexed read), sorted by tag."""
    if not tags:
        return []
    rows = conn.execute(
        select(_T.tag, _T.scorecard_id, runs.c.created_by)
        .join(scorecards, scorecards.c.id == _T.scorecard_id)
        .join(runs, runs.c.id == scorecards.c.run_id)
        .where(_T.workspace == workspace, _T.dataset_id == dataset_id, _T.tag.in_(list(tags)))
        .order_by(_T.tag)
    ).all()
    return [TagHolder(r.tag, r.scorecard_id, r.created_by) for r in rows]
