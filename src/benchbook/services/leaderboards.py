"""The leaderboard of a dataset version: which harness is best on it, at what cost.

One row per harness@version (its newest finished scorecard, its best, or every one), grouped by
grader plan — scorecards graded under different plans are never ranked together — with the
cost–accuracy Pareto frontier of each group marked (:mod:`benchbook.eval.frontier`). A read:
``runs:read``; only the caller's workspace's runs are on it, whoever owns the dataset.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from benchbook.contracts.leaderboard import (
    LEADERBOARD_SELECTS,
    LEADERBOARD_SORTS,
    Leaderboard,
    LeaderboardGroup,
    LeaderboardRow,
    LeaderboardSelect,
    LeaderboardSort,
)
from benchbook.contracts.run import Interval
from benchbook.datasets import identity
from benchbook.datasets.versions import LATEST
from benchbook.errors import InvalidInput
from benchbook.eval.frontier import pareto_frontier
from benchbook.services.bounds import check_text
from benchbook.services.context import Context
from benchbook.services.resolve import resolve_version
from benchbook.store import leaderboards as repo
from benchbook.store.runs import scorecard_tags_of

MAX_FILTER = 64
"""Longest tag or plan-hash prefix a filter takes."""


def get_leaderboard(
    ctx: Context,
    dataset_id: str,
    version: str = LATEST,
    select: LeaderboardSelect = "latest",
    sort: LeaderboardSort = "pass_rate",
    tag: str | None = None,
    plan: str | None = None,
    include_partial: bool = False,
) -> Leaderboard:
    """The leaderboard of one dataset version over the workspace's finished runs.

    Args:
        dataset_id: the dataset id; ``version`` a SemVer, a version tag or ``latest``.
        select: ``latest`` (each harness@version's newest scorecard per plan), ``best`` (its
            highest pass rate) or ``all`` (every scorecard).
        sort: ``pass_rate`` (highest first, then cheaper), ``cost`` (cost per case, cheapest
            first), ``date`` (newest first) or ``harness`` (by id@version).
        tag: only scorecards holding this tag; ``plan``: only plan hashes starting with this.
        include_partial: also show scorecards over fewer cases than the version has (a
            ``--limit`` or ``--case-id`` subset), in groups of their own (``partial``), one
            per selection of cases (:func:`subset_of`), never ranked with full runs or with
            runs over other cases. Without it, ``latest`` and ``best`` consider only scorecards
            covering the whole version, so a subset run never hides a full one.

    Returns:
        Groups of rows, one group per plan hash (most rows first), ranks within a group.

    Raises:
        InvalidInput: an unknown ``select`` or ``sort``, or an over-long filter.
        NotFound: unknown dataset or version (or one the caller cannot see).
    """
    ctx.require("runs:read")
    if select not in LEADERBOARD_SELECTS:
        raise InvalidInput(
            f"select must be one of {', '.join(LEADERBOARD_SELECTS)}", {"select": select}
        )
    if sort not in LEADERBOARD_SORTS:
        raise InvalidInput(f"sort must be one of {', '.join(LEADERBOARD_SORTS)}", {"sort": sort})
    for name, value in (("tag", tag), ("plan", plan)):
        check_text(value, name)
        if value is not None and len(value) > MAX_FILTER:
            raise InvalidInput(f"{name}: at most {MAX_FILTER} characters", {name: value[:80]})
    with ctx.engine.connect() as conn:
        found = resolve_version(conn, ctx.workspace, dataset_id, version)
        heads = repo.finished_scorecards(
            conn,
            ctx.workspace,
            found.pk,
            latest_only=False,
            tag=tag or None,
            plan_prefix=plan or None,
        )
        tags = scorecard_tags_of(conn, [h.id for h in heads])
    rows_by_plan: dict[tuple[str | None, str], list[LeaderboardRow]] = {}
    graders: dict[str, list[str]] = {}
    newest: set[tuple[str | None, str, str]] = set()
    hidden = 0
    for head in heads:  # newest first
        row = _row(head, tags.get(head.id, []), found.case_count)
        if row.partial and not include_partial:
            hidden += 1
            continue
        subset = subset_of(head.settings) if row.partial else None
        key = (subset, head.plan_hash, row.harness)
        if select == "latest" and key in newest:
            continue
        newest.add(key)
        rows_by_plan.setdefault((subset, head.plan_hash), []).append(row)
        graders[head.plan_hash] = [g["id"] for g in orjson.loads(head.plan).get("graders", [])]
    groups = [
        _group(h, graders[h], rows, select, sort, subset)
        for (subset, h), rows in rows_by_plan.items()
    ]
    groups.sort(key=lambda g: (g.partial, -len(g.rows), g.subset or ""))
    return Leaderboard(
        dataset=f"{dataset_id}@{found.version}",
        select=select,
        sort=sort,
        tag=tag or None,
        plan=plan or None,
        include_partial=include_partial,
        dataset_cases=found.case_count,
        groups=groups,
        partial_hidden=hidden,
    )


SHOWN_IDS = 3
"""Case ids a subset's name lists before counting the rest."""


def subset_of(settings_json: str) -> str:
    """The name of the cases a run selected, from its settings (``case_ids``, ``tags``,
    ``limit``, applied in that order): ``case ids a, b, c … (+7) [digest]``, ``tags hard``,
    ``first 200 cases``, joined with `` · ``; ``a subset`` when the settings name none (a
    reported run's own selection). Two runs get the same name exactly when they selected
    alike (a long id list is told apart by the first 8 hex digits of its sha256)."""
    settings = orjson.loads(settings_json)
    parts = []
    ids = sorted(settings.get("case_ids") or [])
    if ids:
        more = f" … (+{len(ids) - SHOWN_IDS:,})" if len(ids) > SHOWN_IDS else ""
        digest = f" [{identity.sha256_hex(orjson.dumps(ids))[:8]}]" if more else ""
        parts.append(f"case ids {', '.join(ids[:SHOWN_IDS])}{more}{digest}")
    if settings.get("tags"):
        parts.append(f"tags {', '.join(sorted(settings['tags']))}")
    if settings.get("limit") is not None:
        parts.append(f"first {settings['limit']:,} cases")
    return " · ".join(parts) or "a subset"


def _row(head: Any, tags: list[str], dataset_cases: int) -> LeaderboardRow:
    """A row from a scorecard header and its summary JSON (read as a mapping: a summary
    written by a newer release may carry more counts, such as ``grader_errors``)."""
    s = orjson.loads(head.summary)
    harness_id, _, harness_version = head.harness_ref.partition("@")
    cases = int(s.get("cases", 0))
    # A summary sums priced costs and adds nothing for an unpriced pair, so a total of 0 means
    # nothing was priced: unknown, not free (None — kept off the cost axis and the frontier).
    cost = float(s.get("cost_usd") or 0.0) or None
    interval = s.get("pass_interval")
    latency = s.get("latency") or {}
    grader_errors = s.get("grader_errors")
    return LeaderboardRow(
        rank=0,
        harness=head.harness_ref,
        harness_id=harness_id,
        harness_version=harness_version,
        run_id=head.run_id,
        scorecard_id=head.id,
        rescore_of=head.rescore_of,
        cases=cases,
        dataset_cases=dataset_cases,
        partial=cases < dataset_cases,
        repeats=int(s.get("repeats", 1)),
        n=int(s.get("n", 0)),
        passed=int(s.get("passed", 0)),
        errors=int(s.get("errors", 0)),
        grader_errors=int(grader_errors) if grader_errors is not None else None,
        pass_rate=s.get("pass_rate"),
        pass_interval=Interval.model_validate(interval) if interval else None,
        pass_at_k=s.get("pass_at_k", {}) if int(s.get("repeats", 1)) > 1 else {},
        cost_usd=cost,
        cost_per_case_usd=cost / cases if cases and cost is not None else None,
        tokens_input=int(s.get("tokens_input", 0)),
        tokens_output=int(s.get("tokens_output", 0)),
        latency_p50_ms=latency.get("p50_ms"),
        latency_p95_ms=latency.get("p95_ms"),
        created_at=head.created_at,
        finished_at=head.finished_at if head.rescore_of is None else head.created_at,
        tags=tags,
    )


def _sort_key(sort: LeaderboardSort) -> Callable[[LeaderboardRow], Any]:
    """Rows without a pass rate or cost go last under the sorts that read them."""
    inf = float("inf")
    if sort == "pass_rate":
        return lambda r: (r.pass_rate is None, -(r.pass_rate or 0.0), r.cost_per_case_usd or inf)
    if sort == "cost":
        return lambda r: (
            r.cost_per_case_usd is None,
            r.cost_per_case_usd or 0.0,
            -(r.pass_rate or 0),
        )
    if sort == "date":
        return lambda r: -r.created_at.timestamp()
    return lambda r: (r.harness_id, r.harness_version, -r.created_at.timestamp())


def _group(
    plan_hash: str,
    graders: list[str],
    rows: list[LeaderboardRow],
    select: LeaderboardSelect,
    sort: LeaderboardSort,
    subset: str | None = None,
) -> LeaderboardGroup:
    partial = subset is not None
    if select == "best":  # the highest pass rate per harness@version, newest among equals
        best: dict[str, LeaderboardRow] = {}
        for row in rows:  # newest first
            held = best.get(row.harness)
            if held is None or (row.pass_rate or -1.0) > (held.pass_rate or -1.0):
                best[row.harness] = row
        rows = list(best.values())
    rows.sort(key=_sort_key(sort))
    for i, row in enumerate(rows, start=1):
        row.rank = i
    points = [
        (r.scorecard_id, r.cost_per_case_usd, r.pass_rate)
        for r in rows
        if r.cost_per_case_usd is not None and r.pass_rate is not None
    ]
    frontier = [] if partial else pareto_frontier(points)  # subsets are not comparable
    on = set(frontier)
    for row in rows:
        row.frontier = row.scorecard_id in on
    return LeaderboardGroup(
        plan_hash=plan_hash,
        graders=graders,
        rows=rows,
        frontier=frontier,
        partial=partial,
        subset=subset,
    )
