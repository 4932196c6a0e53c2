"""Runs repository: run rows, per-(case, sample) results, scorecards and cached judge verdicts.

Results are written in small batches, each batch one transaction that also advances the run's
counters, so a killed process loses at most the results not yet flushed (SPEC H.4).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import (
    Connection,
    and_,
    bindparam,
    case,
    delete,
    func,
    insert,
    or_,
    select,
    update,
)

from benchbook.contracts.comparison import Outcome
from benchbook.store.tables import (
    case_results,
    judge_verdicts,
    runs,
    scorecard_scores,
    scorecard_tags,
    scorecards,
    utcnow,
)

_R = runs.c
_C = case_results.c
_S = scorecards.c
_SS = scorecard_scores.c
_T = scorecard_tags.c


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


_RUN_COLUMNS = tuple(runs.c[f] for f in RunRow.__dataclass_fields__)


@dataclass(frozen=True)
class ResultRow:
    """One (case, sample) result as written: ``trace`` is compressed bytes or None when the
    trace lives in a file (``trace_path``); ``scores`` is the primary scorecard's JSON;
    ``agent_limit`` the trace's ``limit`` (an ``agent`` harness stopped at it)."""

    case_id: str
    sample: int
    position: int
    status: str
    error: str | None
    answer: str
    passed: bool | None
    cost_usd: float | None
    input_tokens: int
    output_tokens: int
    duration_ms: int
    trace: bytes | None
    trace_path: str | None
    trace_sha256: str | None
    scores: str
    grader_error: str | None = None
    agent_limit: str | None = None


ScoreRow = tuple[str, int, bool | None, str, str | None]
"""One scorecard row: ``(case_id, sample, passed, scores JSON, grader_error)``."""


def insert_run(conn: Connection, **values: Any) -> None:
    """Store a new run row (``values`` are the table's columns)."""
    conn.execute(
        insert(runs).values(spent_usd=0.0, cancel_requested=False, created_at=utcnow(), **values)
    )


def get_run(conn: Connection, run_id: str, workspace: str | None = None) -> RunRow | None:
    """The run, optionally only when it belongs to ``workspace``."""
    stmt = select(*_RUN_COLUMNS).where(_R.id == run_id)
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
    stmt = select(*_RUN_COLUMNS).where(_R.workspace == workspace)
    if dataset_id is not None:
        stmt = stmt.where(_R.dataset_id == dataset_id)
    if dataset_version is not None:
        stmt = stmt.where(_R.dataset_version == dataset_version)
    if before is not None:
        at, rid = before
        stmt = stmt.where(or_(_R.created_at < at, and_(_R.created_at == at, _R.id < rid)))
    if harness is not None:
        cond = _R.harness_ref == harness if "@" in harness else _R.harness_ref.like(f"{harness}@%")
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


def _claimable(now: datetime) -> Any:
    """Queued, or running with a lapsed (or no) lease."""
    lapsed = or_(_R.lease_expires_at.is_(None), _R.lease_expires_at < now)
    return or_(_R.status == "queued", and_(_R.status == "running", lapsed))


def lock_claimable(
    conn: Connection, now: datetime, host_prefix: str | None = None, limit: int = 10
) -> list[RunRow]:
    """Runs another worker may take, oldest first, row-locked for the caller's transaction.

    Queued runs and running runs whose lease lapsed before ``now``; with ``host_prefix``
    (``"host:"``) also the running runs held by processes of that host, whose liveness the
    caller checks itself. On PostgreSQL the rows are read ``FOR UPDATE SKIP LOCKED``: a run
    another worker is claiming at this moment is skipped, not waited for; SQLite has one
    writer and no row locks, so the caller's conditional update (:func:`take_run`) decides.
    """
    cond = _claimable(now)
    if host_prefix is not None:
        cond = or_(cond, and_(_R.status == "running", _R.claimed_by.like(f"{host_prefix}%")))
    stmt = (
        select(*_RUN_COLUMNS)
        .where(cond)
        .order_by(_R.created_at, _R.id)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    return [RunRow(*r) for r in conn.execute(stmt)]


def take_run(
    conn: Connection,
    row: RunRow,
    worker: str,
    now: datetime,
    lease_until: datetime,
) -> bool:
    """Give ``row``'s run to ``worker`` if nobody changed its status, holder or lease since
    ``row`` was read (compare-and-set); True when ``worker`` now holds it, ``running``."""
    holder = _R.claimed_by.is_(None) if row.claimed_by is None else _R.claimed_by == row.claimed_by
    until = row.lease_expires_at
    lease = _R.lease_expires_at.is_(None) if until is None else _R.lease_expires_at == until
    stmt = (
        update(runs)
        .where(_R.id == row.id, _R.status == row.status, holder, lease)
        .values(
            status="running",
            claimed_by=worker,
            heartbeat_at=now,
            lease_expires_at=lease_until,
            started_at=func.coalesce(_R.started_at, now),
        )
    )
    return conn.execute(stmt).rowcount == 1


def renew_lease(
    conn: Connection, run_id: str, worker: str, now: datetime, lease_until: datetime
) -> bool | None:
    """Renew ``worker``'s lease on a run in one statement (it row-locks the run on PostgreSQL
    until the caller commits, so a result batch written in the same transaction is fenced:
    nobody can take the run over in between).

    Returns:
        None when ``worker`` no longer holds the run; else whether a cancel was requested.
    """
    stmt = (
        update(runs)
        .where(_R.id == run_id, _R.claimed_by == worker)
        .values(heartbeat_at=now, lease_expires_at=lease_until)
        .returning(_R.cancel_requested)
    )
    row = conn.execute(stmt).first()
    return None if row is None else bool(row[0])


def write_results(
    conn: Connection, run_id: str, scorecard_id: str, rows: Sequence[ResultRow]
) -> None:
    """Insert finished (case, sample) results and their primary-scorecard scores, and add
    their cost to the run (one transaction: the caller's)."""
    if not rows:
        return
    now = utcnow()
    conn.execute(
        insert(case_results),
        [
            {
                "run_id": run_id,
                "case_id": r.case_id,
                "sample": r.sample,
                "position": r.position,
                "status": r.status,
                "error": r.error,
                "answer": r.answer,
                "passed": r.passed,
                "cost_usd": r.cost_usd,
                "input_tokens": r.input_tokens,
                "output_tokens": r.output_tokens,
                "duration_ms": r.duration_ms,
                "trace": r.trace,
                "trace_path": r.trace_path,
                "trace_sha256": r.trace_sha256,
                "finished_at": now,
                "grader_error": r.grader_error,
                "agent_limit": r.agent_limit,
            }
            for r in rows
        ],
    )
    scored = [(r.case_id, r.sample, r.passed, r.scores, r.grader_error) for r in rows]
    write_scores(conn, scorecard_id, scored)
    spent = sum(r.cost_usd or 0.0 for r in rows)
    if spent:
        conn.execute(update(runs).where(_R.id == run_id).values(spent_usd=_R.spent_usd + spent))


def write_scores(conn: Connection, scorecard_id: str, rows: Sequence[ScoreRow]) -> None:
    """Insert ``(case_id, sample, passed, scores JSON, grader_error)`` rows of one scorecard."""
    if rows:
        conn.execute(
            insert(scorecard_scores),
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


def done_keys(conn: Connection, run_id: str, statuses: Sequence[str]) -> set[tuple[str, int]]:
    """``(case_id, sample)`` pairs of the run whose result has one of ``statuses``."""
    stmt = select(_C.case_id, _C.sample).where(_C.run_id == run_id, _C.status.in_(statuses))
    return {(c, s) for c, s in conn.execute(stmt)}


def delete_results(
    conn: Connection, run_id: str, scorecard_id: str, statuses: Sequence[str]
) -> int:
    """Remove the run's results with the given statuses (and their scores); returns how many."""
    keys = [{"c": c, "s": s} for c, s in done_keys(conn, run_id, statuses)]
    if keys:
        conn.execute(
            delete(scorecard_scores).where(
                _SS.scorecard_id == scorecard_id,
                _SS.case_id == bindparam("c"),
                _SS.sample == bindparam("s"),
            ),
            keys,
        )
        conn.execute(
            delete(case_results).where(
                _C.run_id == run_id, _C.case_id == bindparam("c"), _C.sample == bindparam("s")
            ),
            keys,
        )
    return len(keys)


def counts(conn: Connection, run_id: str) -> dict[str, int]:
    """``{done, ok, error, not_run, passed, grader_errors, verdicts}`` over the run's stored
    results (``grader_errors``: ``ok`` results whose grading could not decide; ``verdicts``:
    ``ok`` results with a pass/fail and no grader error)."""
    graded = _C.grader_error.is_not(None).label("graded")
    stmt = (
        select(_C.status, _C.passed, graded, func.count())
        .where(_C.run_id == run_id)
        .group_by(_C.status, _C.passed, graded)
    )
    out = {
        "done": 0,
        "ok": 0,
        "error": 0,
        "not_run": 0,
        "passed": 0,
        "grader_errors": 0,
        "verdicts": 0,
    }
    for status, passed, grader_error, n in conn.execute(stmt):
        out[status] = out.get(status, 0) + n
        if status != "not_run":
            out["done"] += n
        if passed:
            out["passed"] += n
        if status == "ok" and grader_error:
            out["grader_errors"] += n
        elif status == "ok" and passed is not None:
            out["verdicts"] += n
    return out


def top_errors(
    conn: Connection, run_id: str, scorecard_id: str | None = None, limit: int = 5
) -> list[tuple[str, int, str]]:
    """The most frequent error messages of the run: ``(error, count, kind)``, the harness's
    (``kind`` ``harness``, from errored results) first, then the grader errors of
    ``scorecard_id`` (``grader``; none without it), at most ``limit`` of each."""
    n = func.count().label("n")
    stmt = (
        select(_C.error, n)
        .where(_C.run_id == run_id, _C.status == "error")
        .group_by(_C.error)
        .order_by(n.desc(), _C.error)
        .limit(limit)
    )
    out = [(str(e), int(c), "harness") for e, c in conn.execute(stmt)]
    if scorecard_id is not None:
        stmt = (
            select(_SS.grader_error, n)
            .where(_SS.scorecard_id == scorecard_id, _SS.grader_error.is_not(None))
            .group_by(_SS.grader_error)
            .order_by(n.desc(), _SS.grader_error)
            .limit(limit)
        )
        out += [(str(e), int(c), "grader") for e, c in conn.execute(stmt)]
    return out


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
        passed = func.coalesce(bs.c.passed, b.c.passed)
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
        passed, grader_error = func.coalesce(_SS.passed, _C.passed), _SS.grader_error
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
    ``grader_error`` under ``query.scorecard_id`` (``scores`` None without a score row; then
    the result's own ``passed``). With ``max_chars`` the page also stops before its answers,
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
            func.coalesce(ss.c.passed, page.c.passed).label("passed"),
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
    conn: Connection, run_id: str, scorecard_id: str | None, case_id: str, sample: int
) -> Any | None:
    """One result with its trace columns (``trace``, ``trace_path``) and its ``scores`` JSON
    under ``scorecard_id`` (the columns of :func:`scored_result_page`), or None."""
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
            func.coalesce(ss.c.passed, _C.passed).label("passed"),
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


def trace_of(conn: Connection, run_id: str, case_id: str, sample: int) -> Any | None:
    """``(trace, trace_path, trace_sha256, status, error, answer)`` of one result, or None."""
    stmt = select(_C.trace, _C.trace_path, _C.trace_sha256, _C.status, _C.error, _C.answer).where(
        _C.run_id == run_id, _C.case_id == case_id, _C.sample == sample
    )
    return conn.execute(stmt).first()


_SC_COLUMNS = (
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
    stmt = select(*_SC_COLUMNS).where(_S.id == scorecard_id)
    return conn.execute(stmt).first()


def scorecards_of(conn: Connection, run_id: str) -> list[Any]:
    """The run's scorecards, oldest first (same columns as :func:`get_scorecard`)."""
    stmt = select(*_SC_COLUMNS).where(_S.run_id == run_id).order_by(_S.created_at, _S.id)
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


def get_verdict(conn: Connection, workspace: str, judge_hash: str, input_hash: str) -> str | None:
    """A cached judge verdict JSON, or None."""
    stmt = select(judge_verdicts.c.verdict).where(
        judge_verdicts.c.workspace == workspace,
        judge_verdicts.c.judge_hash == judge_hash,
        judge_verdicts.c.input_hash == input_hash,
    )
    value = conn.execute(stmt).scalar()
    return str(value) if value is not None else None


def put_verdict(
    conn: Connection, workspace: str, judge_hash: str, input_hash: str, verdict: str
) -> None:
    """Cache a judge verdict (an existing entry for the key is kept)."""
    if get_verdict(conn, workspace, judge_hash, input_hash) is None:
        conn.execute(
            insert(judge_verdicts).values(
                workspace=workspace,
                judge_hash=judge_hash,
                input_hash=input_hash,
                verdict=verdict,
                created_at=utcnow(),
            )
        )


def outcomes_of(
    conn: Connection, run_id: str, scorecard_id: str, own: bool
) -> Sequence[tuple[str, int, Outcome | None]]:
    """``(case_id, sample, outcome)`` of every result of the run in dataset order under one
    scorecard: ``"passed"``, ``"failed"``, ``"error"`` (harness errored) or None (``not_run``).

    One query, the outcome decided in SQL and the rows fetched at once (100k rows: ~0.5 s less
    than a Python loop over fetched rows). ``own``: the scorecard is the run's own, whose
    verdicts are the results' own ``passed`` — no join with its score rows.
    """
    passed: Any = _C.passed
    source: Any = case_results
    if not own:
        passed = func.coalesce(_SS.passed, _C.passed)
        on = and_(_SS.scorecard_id == scorecard_id, _SS.case_id == _C.case_id)
        source = case_results.outerjoin(scorecard_scores, and_(on, _SS.sample == _C.sample))
    outcome = case(
        (_C.status == "not_run", None),
        (_C.status == "error", "error"),
        (passed, "passed"),
        else_="failed",
    )
    stmt = (
        select(_C.case_id, _C.sample, outcome)
        .select_from(source)
        .where(_C.run_id == run_id)
        .order_by(_C.position, _C.sample)
    )
    # the DBAPI cursor's plain tuples: str, int and str-or-None need no result processing, and
    # skipping SQLAlchemy's Row objects saves ~0.3 s per 100k rows
    return cast(Sequence[tuple[str, int, Outcome | None]], conn.execute(stmt).cursor.fetchall())


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


def results_for(
    conn: Connection, run_id: str, scorecard_id: str, case_ids: Sequence[str]
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
            func.coalesce(_SS.passed, _C.passed).label("passed"),
            _SS.scores,
            _C.cost_usd,
            _C.duration_ms,
        )
        .select_from(case_results.outerjoin(scorecard_scores, scored))
        .where(_C.run_id == run_id, _C.case_id.in_(list(case_ids)))
    )
    return {(r.case_id, r.sample): r for r in conn.execute(stmt)}


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
        select(*_SC_COLUMNS)
        .where(_S.run_id.in_(runs_of.scalar_subquery()))
        .order_by(_S.created_at.desc(), _S.id.desc())
        .limit(limit)
    )
    heads = list(conn.execute(stmt))
    ids = sorted({h.run_id for h in heads})
    rows: list[Any] = list(conn.execute(select(*_RUN_COLUMNS).where(_R.id.in_(ids)))) if ids else []
    by_id = {r.id: RunRow(*r) for r in rows}
    return [(h, by_id[h.run_id]) for h in heads]
