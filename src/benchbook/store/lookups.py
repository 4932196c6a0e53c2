"""Batched reads by id (issue 32): some cases of a version through ``ix_version_cases_case_id``
instead of scanning every body of the version (a 50-row run report on a 200-case dataset parsed
all 200 stored cases, twice), and the scorecard heads of a page of runs in one statement (the
runs list read one scorecard per run).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import Any

from sqlalchemy import Connection, select

from benchbook.contracts.dataset import Case
from benchbook.store.case_reads import iter_case_bodies
from benchbook.store.scorecards import SCORECARD_COLUMNS
from benchbook.store.tables import case_bodies, scorecards, version_cases

ScorecardHeads = dict[str, Any]
"""Scorecard id → its row (the columns of ``store.scorecards.get_scorecard``)."""

LOOKUP_MAX_IDS = 1000
"""Above this many ids a caller scans the version instead (one ordered read, one batch in
memory at a time) rather than holding every looked-up body at once."""
_CHUNK = 500  # ids per statement: well under SQLite's bound parameters


def case_bodies_by_id(
    conn: Connection, version_pk: int, case_ids: Collection[str]
) -> list[tuple[int, str]]:
    """``(position, body)`` of the version's cases whose id is in ``case_ids``, in position
    order (0-based positions; bodies are the stored canonical JSON text). Ids the version does
    not have are left out; at most :data:`LOOKUP_MAX_IDS` ids are meant to be asked at once."""
    vc = version_cases.c
    ids = sorted(set(case_ids))
    found: list[tuple[int, str]] = []
    for i in range(0, len(ids), _CHUNK):
        stmt = (
            select(vc.position, case_bodies.c.body)
            .join(case_bodies, case_bodies.c.id == vc.body_id)
            .where(vc.version_pk == version_pk, vc.case_id.in_(ids[i : i + _CHUNK]))
        )
        found.extend((int(p), b) for p, b in conn.execute(stmt))
    found.sort()
    return found


def iter_cases_of(
    conn: Connection, version_pk: int, case_ids: Collection[str] | None = None
) -> Iterator[tuple[int, Case]]:
    """``(position, case)`` of a version's cases in position order, each stored body parsed
    once: every case when ``case_ids`` is None, else only those ids (up to
    :data:`LOOKUP_MAX_IDS` looked up by id, more by scanning the version and skipping the
    others)."""
    if case_ids is not None and len(case_ids) <= LOOKUP_MAX_IDS:
        for position, body in case_bodies_by_id(conn, version_pk, case_ids):
            yield position, Case.model_validate_json(body)
        return
    wanted = None if case_ids is None else set(case_ids)
    for position, raw in enumerate(iter_case_bodies(conn, version_pk)):
        case = Case.model_validate_json(raw)
        if wanted is None or case.id in wanted:
            yield position, case


def scorecard_heads(conn: Connection, scorecard_ids: Collection[str | None]) -> ScorecardHeads:
    """The rows of these scorecards (``store.scorecards.get_scorecard``'s columns) by id, in one
    statement per 500 ids; unknown ids and None are left out."""
    ids = sorted({i for i in scorecard_ids if i is not None})
    found: ScorecardHeads = {}
    for i in range(0, len(ids), _CHUNK):
        stmt = select(*SCORECARD_COLUMNS).where(scorecards.c.id.in_(ids[i : i + _CHUNK]))
        found.update((r.id, r) for r in conn.execute(stmt))
    return found
