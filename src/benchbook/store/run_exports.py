"""Run export reads: a keyset page of a run's results with one scorecard's verdicts and scores,
and the token counts the results page of the API leaves out."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, and_, select

from benchbook.store.result_pages import _after as keyset_after
from benchbook.store.result_pages import card_verdict
from benchbook.store.tables import case_results, scorecard_scores

_C = case_results.c
_SS = scorecard_scores.c


def export_page(
    conn: Connection,
    run_id: str,
    scorecard_id: str,
    own: bool,
    after: tuple[int, int] | None,
    limit: int,
) -> list[Any]:
    """Up to ``limit`` results after the keyset ``(position, sample)`` in dataset order:
    ``(case_id, sample, position, status, error, answer, passed, scores, cost_usd,
    input_tokens, output_tokens, duration_ms)``, ``scores`` the scorecard's JSON (None
    without a row) and ``passed`` its verdict (``own``: the run's own scorecard, whose verdict
    is the result's)."""
    on = and_(_SS.scorecard_id == scorecard_id, _SS.case_id == _C.case_id, _SS.sample == _C.sample)
    passed = card_verdict(own, _C.passed, _SS.passed)
    stmt = (
        select(
            _C.case_id,
            _C.sample,
            _C.position,
            _C.status,
            _C.error,
            _C.answer,
            passed.label("passed"),
            _SS.scores,
            _C.cost_usd,
            _C.input_tokens,
            _C.output_tokens,
            _C.duration_ms,
        )
        .select_from(case_results.outerjoin(scorecard_scores, on))
        .where(_C.run_id == run_id)
    )
    stmt = stmt.where(*keyset_after(after))
    return list(conn.execute(stmt.order_by(_C.position, _C.sample).limit(limit)))
