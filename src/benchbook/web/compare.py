"""The compare page (SPEC H.7, G): ``GET /compare?baseline=REF&candidate=REF``.

``compare_scorecards`` decides everything (workspace, dataset, statistics); the page orders the
pairs regression first, pages them with a ``rank:index`` cursor, and reads both sides' answers,
scores, cost and latency for the shown page only (``list_paired_results``). The baseline
defaults to the ``baseline`` tag on the candidate's dataset, the candidate to the newest
finished run of the workspace.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request, Response

from benchbook.contracts.comparison import CaseTransition, Comparison
from benchbook.contracts.run import CaseResult
from benchbook.contracts.scorecard import Scorecard
from benchbook.errors import InvalidInput, NotFound
from benchbook.eval.compare_reports import verdict_line
from benchbook.services import runs, scorecards
from benchbook.services.comparisons import (
    compare_scorecards,
    list_dataset_scorecards,
    list_paired_results,
)
from benchbook.web.errors import PageRoute
from benchbook.web.render import TEMPLATES, render, run_case_url
from benchbook.web.session import Page, PageDep

router = APIRouter(route_class=PageRoute, include_in_schema=False)

ORDER = (
    "regressed",
    "fixed",
    "missing_in_candidate",
    "new_in_candidate",
    "still_failing",
    "still_passing",
)
"""Row order: what needs attention first."""
LABELS = {
    "regressed": "regressed",
    "fixed": "fixed",
    "still_passing": "still passing",
    "still_failing": "still failing",
    "missing_in_candidate": "missing",
    "new_in_candidate": "new",
}
ROWS = 50
CHOICES = 60
DEFAULT_TAG = "baseline"


TEMPLATES.env.globals.update(trace_url=run_case_url)


@dataclass
class Row:
    """One aligned pair on the page."""

    pair: CaseTransition
    baseline: CaseResult | None
    candidate: CaseResult | None
    metrics: list[tuple[str, float | None, float | None]]
    cost_delta: float | None
    latency_delta_ms: int | None


def parse_cursor(after: str) -> tuple[int, int]:
    """``"rank:index"`` → ``(rank, index)``; ``(0, -1)`` for the first page.

    Raises:
        InvalidInput: not two non-negative integers.
    """
    if not after:
        return 0, -1
    rank, _, index = after.partition(":")
    if not (rank.isdigit() and index.isdigit()) or int(rank) >= len(ORDER):
        raise InvalidInput(f"after must be 'rank:index' from a previous page (got {after!r})")
    return int(rank), int(index)


_BUCKETS: list[tuple[Comparison, dict[str, list[int]]]] = []
"""The last few comparisons' pair indices by transition (a filter click or the next page
of the same comparison skips the pass over 100k pairs)."""
KEPT_BUCKETS = 4


def buckets_of(comparison: Comparison) -> dict[str, list[int]]:
    """Indices into ``comparison.cases`` by transition, in dataset order (memoized for the
    last :data:`KEPT_BUCKETS` comparison objects; the service hands out the same object for
    an unchanged comparison of ended runs)."""
    for kept, buckets in _BUCKETS:
        if kept is comparison:
            return buckets
    buckets = {t: [] for t in ORDER}
    for i, pair in enumerate(comparison.cases):
        buckets[pair[2]].append(i)
    _BUCKETS.insert(0, (comparison, buckets))
    del _BUCKETS[KEPT_BUCKETS:]
    return buckets


def page_of(
    comparison: Comparison, show: str, after: tuple[int, int], limit: int = ROWS
) -> tuple[list[CaseTransition], str | None]:
    """Up to ``limit`` pairs in :data:`ORDER` then dataset order after the cursor, only
    transition ``show`` unless it is ``all``; and the next page's cursor (None at the end)."""
    buckets = buckets_of(comparison)
    picked: list[tuple[int, int]] = []
    for rank, name in enumerate(ORDER):
        if rank < after[0] or (show != "all" and name != show):
            continue
        indices = buckets[name]
        start = bisect_right(indices, after[1]) if rank == after[0] else 0
        picked += [(rank, i) for i in indices[start : start + limit + 1 - len(picked)]]
        if len(picked) > limit:
            break
    more = len(picked) > limit
    picked = picked[:limit]
    cursor = f"{picked[-1][0]}:{picked[-1][1]}" if more and picked else None
    return [comparison.cases[i] for _, i in picked], cursor


def _metrics(
    base: CaseResult | None, cand: CaseResult | None
) -> list[tuple[str, float | None, float | None]]:
    values: dict[str, list[float | None]] = {}
    for side, result in enumerate((base, cand)):
        for score in result.scores if result else []:
            if score.status == "ok":
                values.setdefault(score.metric, [None, None])[side] = score.value
    return [(name, v[0], v[1]) for name, v in sorted(values.items())]


def _delta(a: Any, b: Any) -> Any:
    return None if a is None or b is None else b - a


def rows_of(page: Page, comparison: Comparison, pairs: list[CaseTransition]) -> list[Row]:
    """The shown pairs with both sides' results (one read per side for the page)."""
    ids = list(dict.fromkeys(p.case_id for p in pairs))
    results = list_paired_results(page.ctx, comparison, ids)
    out = []
    for pair in pairs:
        base, cand = results.get((pair.case_id, pair.sample), (None, None))
        out.append(
            Row(
                pair=pair,
                baseline=base,
                candidate=cand,
                metrics=_metrics(base, cand),
                cost_delta=_delta(base and base.cost_usd, cand and cand.cost_usd),
                latency_delta_ms=_delta(base and base.duration_ms, cand and cand.duration_ms),
            )
        )
    return out


def _scorecard_of(page: Page, ref: str) -> Scorecard:
    """A candidate reference (scorecard or run id) → its scorecard (NotFound as the service)."""
    if ref.startswith("run_"):
        run = runs.get_run(page.ctx, ref)
        if run.scorecard_id is None:
            raise NotFound(f"run {ref!r} has no scorecard", {"id": ref})
        ref = run.scorecard_id
    return scorecards.get_scorecard(page.ctx, ref)


def choices(page: Page, dataset_id: str) -> list[Scorecard]:
    """Scorecards of the dataset's ended runs, newest first: the options of both selects."""
    return list_dataset_scorecards(page.ctx, dataset_id, limit=CHOICES)


def _latest_candidate(page: Page) -> str | None:
    newest = list_dataset_scorecards(page.ctx, None, limit=1)
    return newest[0].id if newest else None


def filter_url(comparison: Comparison, show: str) -> str:
    """This comparison filtered to one transition (``all``: every pair)."""
    query = {"baseline": comparison.baseline, "candidate": comparison.candidate}
    if show != "all":
        query["show"] = show
    return "/compare?" + urlencode(query)


@router.get("/compare")
def compare_page(
    request: Request,
    page: PageDep,
    baseline: str = "",
    candidate: str = "",
    show: str = "all",
    after: str = "",
) -> Response:
    """Baseline vs candidate: verdict, transition filters, aligned rows regression first."""
    if show != "all" and show not in ORDER:
        raise InvalidInput(f"show must be all or one of {', '.join(ORDER)} (got {show!r})")
    cursor = parse_cursor(after)
    candidate = candidate.strip() or _latest_candidate(page) or ""
    values: dict[str, Any] = {"nav": "runs", "baseline_ref": baseline, "show": show}
    if not candidate:
        return render(request, page, "compare.html", comparison=None, options=[], **values)
    try:
        comparison = compare_scorecards(page.ctx, baseline.strip() or DEFAULT_TAG, candidate)
    except NotFound as exc:
        if baseline.strip() or "tag" not in (exc.details or {}):
            raise
        return _picker(request, page, values, _scorecard_of(page, candidate), exc.message, 200)
    except InvalidInput as exc:  # e.g. scorecards of different datasets
        card = _scorecard_of(page, candidate)
        return _picker(request, page, values, card, exc.message, exc.http_status)
    dataset_id = comparison.candidate_dataset.split("@")[0]
    options = choices(page, dataset_id)
    listed = next((o for o in options if o.id == comparison.candidate), None)
    card = listed or scorecards.get_scorecard(page.ctx, comparison.candidate)
    values.update(candidate_card=card, dataset_id=dataset_id)
    pairs, next_cursor = page_of(comparison, show, cursor)
    return render(
        request,
        page,
        "compare.html",
        comparison=comparison,
        verdict=verdict_line(comparison),
        rows=rows_of(page, comparison, pairs),
        next_cursor=next_cursor,
        first_page=not after,
        order=ORDER,
        labels=LABELS,
        filter_url=filter_url,
        options=_with_chosen(page, options, comparison, card),
        **values,
    )


def _with_chosen(
    page: Page, options: list[Scorecard], comparison: Comparison, candidate: Scorecard
) -> list[Scorecard]:
    """The options plus the compared scorecards when they are older than the listed ones."""
    known = {o.id for o in options}
    extra = [candidate] if candidate.id not in known else []
    if comparison.baseline not in known and comparison.baseline != candidate.id:
        extra.append(scorecards.get_scorecard(page.ctx, comparison.baseline))
    return options + extra


def _picker(
    request: Request,
    page: Page,
    values: dict[str, Any],
    card: Scorecard,
    message: str,
    status: int,
) -> Response:
    """The selects with a message instead of a comparison (no baseline yet, bad pair)."""
    values.update(candidate_card=card, dataset_id=card.dataset.split("@")[0])
    options = choices(page, values["dataset_id"])
    return render(
        request,
        page,
        "compare.html",
        status_code=status,
        comparison=None,
        problem=message,
        options=options,
        **values,
    )
