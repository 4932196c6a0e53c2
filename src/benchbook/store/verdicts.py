"""Stored verdict vectors (``verdict_vectors``, migration 0018): one blob per scorecard holding
its ``(case_id, sample, outcome)`` of every result in dataset order (the encoding is
``eval/verdicts.py``'s; the store keeps bytes).

A vector is valid for the run state it was read at: its ``run_stamp`` is the run's
``status|finished_at`` then (:func:`run_stamp`). A run's results change only while it is not
ended or when it is queued again (resume, retry: ``finished_at`` is cleared, then set anew when
it ends), so a vector is read only for an ended run whose stamp still matches; otherwise the
caller reads the rows and writes a new vector (:func:`write_vector` replaces the old one).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Connection, delete, insert, select

from benchbook.store.tables import utcnow, verdict_vectors

_V = verdict_vectors.c


def run_stamp(status: str, finished_at: datetime | None) -> str:
    """What a vector is valid for: ``"finished|2026-12-05T07:00:00.123456+00:00"``
    (``"finished|-"`` for a run ended without a time)."""
    return f"{status}|{finished_at.isoformat() if finished_at is not None else '-'}"


def read_vector(conn: Connection, scorecard_id: str, stamp: str) -> bytes | None:
    """The stored blob of ``scorecard_id`` if it was written for ``stamp``, else None."""
    stmt = select(_V.vector).where(_V.scorecard_id == scorecard_id, _V.run_stamp == stamp)
    blob = conn.scalar(stmt)
    return None if blob is None else bytes(blob)


def write_vector(
    conn: Connection, scorecard_id: str, stamp: str, pairs: int, vector: bytes
) -> None:
    """Store ``vector`` (``pairs`` pairs) as ``scorecard_id``'s for ``stamp``, replacing any
    earlier one (in the caller's transaction)."""
    conn.execute(delete(verdict_vectors).where(_V.scorecard_id == scorecard_id))
    conn.execute(
        insert(verdict_vectors).values(
            scorecard_id=scorecard_id,
            run_stamp=stamp,
            pairs=pairs,
            vector=vector,
            created_at=utcnow(),
        )
    )
