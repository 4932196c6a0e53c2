"""Each scorecard's stored verdict vector (``store/verdicts.py``, ``eval/verdicts.py``): written
when a scorecard of an ended run is finalized and when a run ends, read by comparisons, and
filled at the first comparison of a scorecard that has none (scorecards from before migration
0018, runs ended by a path that writes none) or whose run was queued again since. Not
operations: the callers check access.
"""

from __future__ import annotations

import logging

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError

from benchbook.eval.verdicts import Verdicts
from benchbook.services.runs import TERMINAL
from benchbook.store import run_results
from benchbook.store import runs as repo
from benchbook.store import verdicts as vectors

log = logging.getLogger(__name__)


def _rows(conn: Connection, run: repo.RunRow, scorecard_id: str) -> Verdicts:
    own = scorecard_id == run.scorecard_id
    return Verdicts.of_rows(run_results.outcomes_of(conn, run.id, scorecard_id, own))


def store_verdicts(conn: Connection, run: repo.RunRow, scorecard_id: str) -> None:
    """Read ``scorecard_id``'s outcomes from the rows and store its vector for the run's
    current state (in the caller's transaction); nothing while the run has not ended."""
    if run.status in TERMINAL:
        found = _rows(conn, run, scorecard_id)
        stamp = vectors.run_stamp(run.status, run.finished_at)
        vectors.write_vector(conn, scorecard_id, stamp, len(found), found.encode())


def verdicts_of(conn: Connection, run: repo.RunRow, scorecard_id: str) -> tuple[Verdicts, bool]:
    """``(vector, stale)``: the stored vector of ``scorecard_id`` when its run has ended and is
    as it was when the vector was written; else its outcomes read from the rows, ``stale``
    True when the run has ended (the caller stores it with :func:`save_verdicts`)."""
    if run.status not in TERMINAL:
        return _rows(conn, run, scorecard_id), False
    blob = vectors.read_vector(conn, scorecard_id, vectors.run_stamp(run.status, run.finished_at))
    if blob is not None:
        try:
            return Verdicts.decode(blob), False
        except ValueError as exc:
            log.warning(
                "verdict vector of %s unreadable (%s): read from its rows", scorecard_id, exc
            )
    return _rows(conn, run, scorecard_id), True


def save_verdicts(engine: Engine, run: repo.RunRow, scorecard_id: str, found: Verdicts) -> None:
    """Store ``found`` (from :func:`verdicts_of`) as ``scorecard_id``'s vector for the run's
    state it was read at, in its own transaction. A failure is logged, not raised (a
    concurrent comparison storing the same vector, a locked database): the next comparison
    reads the rows again."""
    stamp = vectors.run_stamp(run.status, run.finished_at)
    try:
        with engine.begin() as conn:
            vectors.write_vector(conn, scorecard_id, stamp, len(found), found.encode())
    except DBAPIError as exc:
        log.warning("verdict vector of %s not stored: %s", scorecard_id, exc)
