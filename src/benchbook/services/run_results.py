"""Reading a run's results (SPEC H.4): pages of (case, sample) results, one full trace, and a
run's status for the dataset timeline."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import orjson
from sqlalchemy import Connection

from benchbook.contracts.run import MAX_REPEATS, RESULT_FILTERS, CaseResult, ResultFilter, Trace
from benchbook.contracts.score import Score
from benchbook.errors import InvalidInput, NotFound, PayloadTooLarge
from benchbook.services import traces
from benchbook.services.bounds import MAX_SEARCH, check_text
from benchbook.services.comparisons import resolve_baseline
from benchbook.services.context import Context
from benchbook.services.runs import MAX_PAGE, load_run
from benchbook.store import history as history_repo
from benchbook.store import result_pages
from benchbook.store import run_results as result_repo
from benchbook.store import runs as repo
from benchbook.store import scorecards as card_repo


def list_run_results(
    ctx: Context,
    run_id: str,
    after: str | None = None,
    limit: int = 100,
    outcome: ResultFilter | None = None,
    search: str | None = None,
    baseline: str | None = None,
    scorecard: str | None = None,
) -> list[CaseResult]:
    """A page of the run's (case, sample) results in dataset order, with one scorecard's
    scores and verdicts (the run's own by default) and without traces (read one with
    :func:`get_run_trace`).

    A page also stops before its answers, errors and scores pass ``max_page_bytes``
    characters (16 MiB; at least one result), so it may hold fewer than ``limit``: continue
    from the last result's cursor until a page is empty.

    Args:
        after: the cursor ``"<position>:<sample>"`` of the last result of the previous page.
        limit: 1–500.
        outcome: only ``passed``, ``failed`` (errored ones included: they count as failed),
            ``errored`` (the harness failed), ``grader_error`` (grading could not decide),
            ``not_run``, or — against ``baseline`` — ``regressed`` (passed in the baseline,
            not here) or ``fixed`` (the reverse), as ``compare_scorecards`` decides them;
            ``flaky``: cases whose verdict differs across this run's samples or its
            harness@version's other ended runs on this dataset version; decided under
            ``scorecard``.
        search: only case ids containing this text (case-insensitive).
        baseline: for ``regressed``/``fixed``: a scorecard id, a run id (its own scorecard)
            or a scorecard tag of this run's dataset id.
        scorecard: one of this run's scorecards (a rescore's id); None: the run's own.

    Raises:
        InvalidInput: a bad cursor or limit; ``regressed``/``fixed`` without a baseline; a
            baseline of another dataset id.
        NotFound: unknown run, scorecard, baseline or tag (or another workspace's), or a
            scorecard of another run.
    """
    ctx.require("runs:read")
    with ctx.engine.connect() as conn:
        row = load_run(conn, ctx, run_id)
        card_id = _scorecard_of(conn, row, scorecard)
    return _result_page(ctx, row, card_id, after, limit, outcome, search, baseline)


def list_scorecard_results(
    ctx: Context,
    scorecard_id: str,
    after: str | None = None,
    limit: int = 100,
    outcome: ResultFilter | None = None,
    search: str | None = None,
    baseline: str | None = None,
) -> list[CaseResult]:
    """A page of one scorecard's (case, sample) results (a rescore's or a run's own), in
    dataset order with that scorecard's scores and verdicts — :func:`list_run_results` of the
    scorecard's run with ``scorecard`` set; the same cursor, limit and filters.

    Raises:
        InvalidInput: as :func:`list_run_results`.
        NotFound: unknown scorecard (or another workspace's), baseline or tag.
    """
    ctx.require("runs:read")
    from benchbook.services.scorecards import load_scorecard

    with ctx.engine.connect() as conn:
        head, row = load_scorecard(conn, ctx, scorecard_id)
    return _result_page(ctx, row, head.id, after, limit, outcome, search, baseline)


def _scorecard_of(conn: Connection, row: repo.RunRow, scorecard: str | None) -> str | None:
    """The id of ``row``'s scorecard named ``scorecard`` (None: the run's own).

    Raises:
        NotFound: no such scorecard of this run.
    """
    if scorecard is None or scorecard == row.scorecard_id:
        return row.scorecard_id
    head = card_repo.get_scorecard(conn, scorecard)
    if head is None or head.run_id != row.id:
        raise NotFound(
            f"scorecard {scorecard!r} is not a scorecard of run {row.id}",
            {"id": row.id, "scorecard": scorecard},
        )
    return str(head.id)


def _result_page(
    ctx: Context,
    row: repo.RunRow,
    scorecard_id: str | None,
    after: str | None,
    limit: int,
    outcome: ResultFilter | None,
    search: str | None,
    baseline: str | None,
) -> list[CaseResult]:
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidInput(f"limit must be between 1 and {MAX_PAGE}", {"limit": limit})
    if outcome is not None and outcome not in RESULT_FILTERS:
        raise InvalidInput(
            f"outcome must be one of {', '.join(RESULT_FILTERS)}", {"outcome": outcome}
        )
    cursor = _cursor(after)
    check_text(search, "search")
    if search is not None and len(search) > MAX_SEARCH:
        raise InvalidInput(f"search: at most {MAX_SEARCH} characters", {"search": search[:80]})
    with ctx.engine.connect() as conn:
        flaky: tuple[str, ...] = ()
        if outcome == "flaky":
            flaky = (row.id, *history_repo.sibling_runs(conn, row.id, ctx.workspace))
        query = result_pages.ResultQuery(
            scorecard_id=scorecard_id,
            outcome=outcome,
            search=search or None,
            baseline=_baseline(conn, ctx, row, outcome, baseline),
            own=scorecard_id == row.scorecard_id,
            flaky_among=flaky,
        )
        rows = result_pages.scored_result_page(
            conn, row.id, query, cursor, limit, ctx.settings.max_page_bytes
        )
    return [_result(r) for r in rows]


def _baseline(
    conn: Connection, ctx: Context, row: repo.RunRow, outcome: str | None, ref: str | None
) -> tuple[str, str, bool] | None:
    if outcome not in ("regressed", "fixed"):
        return None
    if not ref:
        raise InvalidInput(
            f"outcome {outcome!r} needs a baseline (a scorecard id, run id or tag)",
            {"outcome": outcome},
        )
    card, run = resolve_baseline(conn, ctx, ref, row.dataset_id)
    if run.dataset_id != row.dataset_id:
        raise InvalidInput(
            f"the baseline is a scorecard of {card.dataset} and run {row.id} is of "
            f"{row.dataset_id}: pick a baseline of the same dataset",
            {"baseline": ref},
        )
    return run.id, card.id, card.id == run.scorecard_id


def _result(r: Any, trace: Trace | None = None) -> CaseResult:
    return CaseResult(
        case_id=r.case_id,
        sample=r.sample,
        position=r.position,
        status=r.status,
        error=r.error,
        answer=r.answer,
        passed=r.passed,
        grader_error=r.grader_error if r.status == "ok" else None,
        scores=[Score.model_validate(s) for s in orjson.loads(r.scores or "[]")],
        cost_usd=r.cost_usd,
        duration_ms=r.duration_ms,
        trace=trace,
    )


def check_sample(sample: int) -> None:
    """Refuse a repeat index no run can hold (InvalidInput naming ``sample``): 0 to
    ``MAX_REPEATS - 1``. A 10**23 would otherwise reach the database and fail there."""
    if not 0 <= sample < MAX_REPEATS:
        problem = f"must be from 0 to {MAX_REPEATS - 1} (a run takes ≤ {MAX_REPEATS} samples)"
        raise InvalidInput(
            f"sample: {problem}", {"errors": [{"path": "sample", "message": problem}]}
        )


def get_run_result(
    ctx: Context, run_id: str, case_id: str, sample: int = 0, scorecard: str | None = None
) -> CaseResult:
    """One (case, sample) result of a run with one scorecard's scores (the run's own by
    default, else the rescore ``scorecard`` of this run) and its full trace (None when the
    result has none, e.g. ``not_run``). Not an operation: the case trace page's read and
    ``runs trace --scorecard``, :func:`get_run_trace` plus the result row.

    Raises:
        NotFound: unknown run (or another workspace's), a scorecard of another run, or no
            result for that case and sample.
        InvalidInput: ``sample`` outside 0 … 99.
    """
    ctx.require("runs:read")
    check_sample(sample)
    with ctx.engine.connect() as conn:
        row = load_run(conn, ctx, run_id)
        card_id = _scorecard_of(conn, row, scorecard)
        own = card_id == row.scorecard_id
        found = result_pages.scored_result(conn, run_id, card_id, own, case_id, sample)
    if found is None:
        raise NotFound(
            f"no result for case {case_id!r} sample {sample} in run {run_id}",
            {"id": run_id, "case_id": case_id, "sample": sample},
        )
    trace = None
    if found.trace is not None or found.trace_path is not None:
        trace = _bounded_trace(ctx, found, run_id, case_id, sample)
    return _result(found, trace)


RESULTS_CURSOR_PATTERN = "^([0-9]{1,18})(?::([0-9]{1,9}))?$"
"""A results page cursor ``position:sample`` (``next_after``), ASCII digits only."""


def _cursor(after: str | None) -> tuple[int, int] | None:
    if after is None:
        return None
    match = re.fullmatch(RESULTS_CURSOR_PATTERN[1:-1], after)
    if match is None:
        raise InvalidInput(
            "after must be '<position>:<sample>' from a previous page", {"after": after}
        )
    return int(match[1]), int(match[2] or "0")


def get_run_trace(ctx: Context, run_id: str, case_id: str, sample: int = 0) -> Trace:
    """The full trace of one (case, sample) of a run.

    Raises:
        NotFound: unknown run (or another workspace's) or no result for that case and sample.
        InvalidInput: ``sample`` outside 0 … 99.
    """
    ctx.require("runs:read")
    check_sample(sample)
    with ctx.engine.connect() as conn:
        load_run(conn, ctx, run_id)
        found = result_repo.trace_of(conn, run_id, case_id, sample)
    if found is None or (found.trace is None and found.trace_path is None):
        raise NotFound(
            f"no trace for case {case_id!r} sample {sample} in run {run_id}",
            {"id": run_id, "case_id": case_id, "sample": sample},
        )
    return _bounded_trace(ctx, found, run_id, case_id, sample)


def _bounded_trace(ctx: Context, found: Any, run_id: str, case_id: str, sample: int) -> Trace:
    """The stored trace, or PayloadTooLarge pointing at :func:`export_run_trace` when its JSON
    is larger than ``max_page_bytes``."""
    try:
        return traces.load_trace(
            ctx.settings, found.trace, found.trace_path, ctx.settings.max_page_bytes
        )
    except PayloadTooLarge as exc:
        raise PayloadTooLarge(
            f"the trace of case {case_id!r} sample {sample} is larger than "
            f"{ctx.settings.max_page_bytes} bytes (BENCHBOOK_MAX_PAGE_BYTES); download it with "
            f"export_run_trace (GET /api/runs/{run_id}/trace-exports/{case_id}?sample={sample})",
            {**exc.details, "id": run_id, "case_id": case_id, "sample": sample},
        ) from None


def export_run_trace(ctx: Context, run_id: str, case_id: str, sample: int = 0) -> Iterator[bytes]:
    """Stream the stored trace of one (case, sample) as its JSON bytes, whatever its size
    (chunks of 256 KiB, never held whole): the way to read a trace past ``max_page_bytes``.
    Over MCP the text is cut at the tool's stream bound (8 MiB) with a note.

    Raises (eagerly, before the first chunk):
        NotFound: unknown run (or another workspace's) or no trace for that case and sample.
        InvalidInput: ``sample`` outside 0 … 99.
    """
    ctx.require("runs:read")
    check_sample(sample)
    with ctx.engine.connect() as conn:
        load_run(conn, ctx, run_id)
        found = result_repo.trace_of(conn, run_id, case_id, sample)
    if found is None or (found.trace is None and found.trace_path is None):
        raise NotFound(
            f"no trace for case {case_id!r} sample {sample} in run {run_id}",
            {"id": run_id, "case_id": case_id, "sample": sample},
        )
    return traces.trace_chunks(ctx.settings, found.trace, found.trace_path)
