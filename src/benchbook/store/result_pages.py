"""Reading a run's results back a page at a time, in dataset order (keyset ``(position,
sample)``), with one scorecard's scores, filtered by outcome or case id."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, and_, func, or_, select

from benchbook.store.tables import case_results, scorecard_scores

_C = case_results.c
_SS = scorecard_scores.c


def card_verdict(own: bool, result_passed: Any, score_passed: Any) -> Any:
    """A result's verdict under a scorecard: under the run's own (``own``), the result's own
    ``passed``; under any other (a rescore, an imported report), that scorecard's score row's
    ``passed`` alone — None (no verdict) when its graders gave none or it has no row for the
    result, never the run's own verdict in its place (a rescore with only measuring graders
    once listed the original run's passes)."""
    return result_passed if own else score_passed


def _after(after: tuple[int, int] | None) -> list[Any]:
    """The keyset condition "after ``(position, sample)``" with a range on ``position``, so
    the planner walks ``ix_case_results_order`` (a bare ``run_id = ?`` lets SQLite pick the
    narrower ``ix_case_results_outcome`` and sort the whole run: 200 ms instead of 2 ms)."""
    if after is None:
        return [_C.position >= 0]
    pos, sample = after
    return [_C.position >= pos, or_(_C.position > pos, _C.sample > sample)]


def result_page(
    conn: Connection,
    run_id: str,
    after: tuple[int, int] | None,
    limit: int,
    with_trace: bool = False,
) -> list[Any]:
    """Results in dataset order after the keyset ``(position, sample)``."""
    cols = [
        _C.case_id,
        _C.sample,
        _C.position,
        _C.status,
        _C.error,
        _C.answer,
        _C.passed,
        _C.cost_usd,
        _C.input_tokens,
        _C.output_tokens,
        _C.duration_ms,
        _C.agent_limit,
    ]
    if with_trace:
        cols += [_C.trace, _C.trace_path, _C.trace_sha256]
    stmt = select(*cols).where(_C.run_id == run_id)
    stmt = stmt.where(*_after(after)).order_by(_C.position, _C.sample).limit(limit)
    return list(conn.execute(stmt))


@dataclass(frozen=True)
class ResultQuery:
    """What a filtered page of results selects (see :func:`scored_result_page`).

    ``outcome``: ``passed``, ``failed`` (errored included), ``errored``, ``grader_error``,
    ``not_run``, or with a ``baseline`` ``(run_id, scorecard_id, own)``: ``regressed``
    (baseline passed, this run did not) or ``fixed`` (the reverse); ``search``: a case-id
    substring (case-insensitive). ``own``: ``scorecard_id`` is the run's own scorecard, whose
    verdicts are the results' own columns; another (a rescore) decides every filter by its
    score rows.
    """

    scorecard_id: str | None
    outcome: str | None = None
    search: str | None = None
    baseline: tuple[str, str, bool] | None = None
    own: bool = True
    flaky_among: tuple[str, ...] = ()  # ``flaky``: the other runs its verdicts are compared with


def _baseline_passed(query: ResultQuery, source: Any) -> tuple[Any, Any]:
    """``(source joined to the baseline's results, its "passed" condition)``."""
    assert query.baseline is not None
    base_run, base_card, own = query.baseline
    b = case_results.alias("b")
    on = and_(b.c.run_id == base_run, b.c.case_id == _C.case_id, b.c.sample == _C.sample)
    source = source.join(b, on)
    passed: Any = b.c.passed
    if not own:
        bs = scorecard_scores.alias("bs")
        on_bs = and_(
            bs.c.scorecard_id == base_card, bs.c.case_id == b.c.case_id, bs.c.sample == b.c.sample
        )
        source = source.outerjoin(bs, on_bs)
        passed = bs.c.passed
    return source, and_(b.c.status == "ok", passed.is_(True))


def _outcome_filter(query: ResultQuery) -> tuple[Any, list[Any]]:
    source: Any = case_results
    passed: Any = _C.passed
    grader_error: Any = _C.grader_error
    if not query.own:
        on = and_(
            _SS.scorecard_id == query.scorecard_id,
            _SS.case_id == _C.case_id,
            _SS.sample == _C.sample,
        )
        source = source.outerjoin(scorecard_scores, on)
        passed, grader_error = _SS.passed, _SS.grader_error
    done = _C.status != "not_run"
    passed_now = and_(_C.status == "ok", passed.is_(True))
    if query.outcome in ("regressed", "fixed"):
        source, before = _baseline_passed(query, source)
        if query.outcome == "regressed":
            return source, [before, done, ~passed_now]
        return source, [~before, passed_now]
    if query.outcome == "flaky":
        from benchbook.store.history import flaky_case_ids

        run_id = query.flaky_among[0]
        return source, [_C.case_id.in_(flaky_case_ids(run_id, query.flaky_among[1:]))]
    where = {
        "passed": [passed_now],
        "failed": [done, or_(passed.is_(False), passed.is_(None))],
        "errored": [_C.status == "error"],
        "grader_error": [_C.status == "ok", grader_error.is_not(None)],
        "not_run": [_C.status == "not_run"],
    }
    return source, where.get(query.outcome or "", [])


def scored_result_page(
    conn: Connection,
    run_id: str,
    query: ResultQuery,
    after: tuple[int, int] | None,
    limit: int,
    max_chars: int | None = None,
) -> list[Any]:
    """A page of results (no traces) in dataset order after the keyset ``(position,
    sample)``, filtered by ``query``, each with its scores JSON, ``passed`` and
    ``grader_error`` under ``query.scorecard_id`` (``scores`` None without a score row;
    ``passed`` the result's own under the run's own scorecard, else the scorecard's verdict:
    :func:`card_verdict`). With ``max_chars`` the page also stops before its answers,
    errors and scores pass that many characters (at least one result), decided from their
    lengths before any of them is read (issue 27: 300 answers of 1 MB cost 1 GB).

    The page is chosen first (walking ``ix_case_results_order``, limited), then its scores
    are joined on their primary key: a page costs the same at any depth, whatever the
    planner's statistics (joined before the limit, PostgreSQL without fresh statistics
    joined all 100k scores: 400 ms).
    """
    source, where = _outcome_filter(query)
    cols = [
        _C.case_id,
        _C.sample,
        _C.position,
        _C.status,
        _C.error,
        _C.answer,
        _C.passed,
        _C.cost_usd,
        _C.duration_ms,
    ]
    chosen = select(*cols).select_from(source).where(_C.run_id == run_id, *where)
    if query.search:
        chosen = chosen.where(_C.case_id.icontains(query.search, autoescape=True))
    ordered = chosen.where(*_after(after)).order_by(_C.position, _C.sample)
    ss = scorecard_scores.alias("ss")
    if max_chars is not None:
        limit = _fitting(conn, ordered.limit(limit).subquery(), ss, query, max_chars) or limit
    page = ordered.limit(limit).subquery()
    on = and_(
        ss.c.scorecard_id == query.scorecard_id,
        ss.c.case_id == page.c.case_id,
        ss.c.sample == page.c.sample,
    )
    shown = [c for c in page.c if c.name != "passed"]
    stmt = (
        select(
            *shown,
            card_verdict(query.own, page.c.passed, ss.c.passed).label("passed"),
            ss.c.scores,
            ss.c.grader_error,
        )
        .select_from(page.outerjoin(ss, on))
        .order_by(page.c.position, page.c.sample)
    )
    return list(conn.execute(stmt))


def _fitting(conn: Connection, page: Any, ss: Any, query: ResultQuery, max_chars: int) -> int:
    """How many results of ``page`` (in order) fit in ``max_chars`` characters of answer,
    error and scores (at least one; 0 for an empty page), from ``length()`` alone."""
    on = and_(
        ss.c.scorecard_id == query.scorecard_id,
        ss.c.case_id == page.c.case_id,
        ss.c.sample == page.c.sample,
    )
    size = (
        func.coalesce(func.length(page.c.answer), 0)
        + func.coalesce(func.length(page.c.error), 0)
        + func.coalesce(func.length(ss.c.scores), 0)
    )
    sizes = conn.execute(
        select(size).select_from(page.outerjoin(ss, on)).order_by(page.c.position, page.c.sample)
    ).scalars()
    total = kept = 0
    for kept, one in enumerate(sizes, 1):
        total += int(one or 0)
        if total > max_chars:
            return max(1, kept - 1)
    return kept


def iter_results(
    conn: Connection, run_id: str, with_trace: bool = False, chunk: int = 2000
) -> Iterator[Any]:
    """Every result of the run in dataset order, fetched in keyset chunks."""
    after: tuple[int, int] | None = None
    while True:
        rows = result_page(conn, run_id, after, chunk, with_trace)
        if not rows:
            return
        yield from rows
        after = (rows[-1].position, rows[-1].sample)


def scored_result(
    conn: Connection, run_id: str, scorecard_id: str | None, own: bool, case_id: str, sample: int
) -> Any | None:
    """One result with its trace columns (``trace``, ``trace_path``) and its ``scores`` JSON
    under ``scorecard_id`` (the columns of :func:`scored_result_page`; ``own``: the run's own
    scorecard), or None."""
    ss = scorecard_scores.alias("ss")
    on = and_(ss.c.scorecard_id == scorecard_id, ss.c.case_id == _C.case_id)
    stmt = (
        select(
            _C.case_id,
            _C.sample,
            _C.position,
            _C.status,
            _C.error,
            _C.answer,
            card_verdict(own, _C.passed, ss.c.passed).label("passed"),
            _C.cost_usd,
            _C.duration_ms,
            ss.c.scores,
            ss.c.grader_error,
            _C.trace,
            _C.trace_path,
        )
        .select_from(case_results.outerjoin(ss, and_(on, ss.c.sample == _C.sample)))
        .where(_C.run_id == run_id, _C.case_id == case_id, _C.sample == sample)
    )
    return conn.execute(stmt).first()


def results_for(
    conn: Connection, run_id: str, scorecard_id: str, own: bool, case_ids: Sequence[str]
) -> dict[tuple[str, int], Any]:
    """``(case_id, sample) → (case_id, sample, position, status, error, answer, passed, scores,
    cost_usd, duration_ms)`` of the run's results for ``case_ids`` (every sample) under one
    scorecard (``scores`` its JSON, None when it has no row). No traces: a page of compared
    cases reads ≤ 100 ids at once."""
    if not case_ids:
        return {}
    scored = and_(
        _SS.scorecard_id == scorecard_id, _SS.case_id == _C.case_id, _SS.sample == _C.sample
    )
    stmt = (
        select(
            _C.case_id,
            _C.sample,
            _C.position,
            _C.status,
            _C.error,
            _C.answer,
            card_verdict(own, _C.passed, _SS.passed).label("passed"),
            _SS.scores,
            _C.cost_usd,
            _C.duration_ms,
        )
        .select_from(case_results.outerjoin(scorecard_scores, scored))
        .where(_C.run_id == run_id, _C.case_id.in_(list(case_ids)))
    )
    return {(r.case_id, r.sample): r for r in conn.execute(stmt)}
