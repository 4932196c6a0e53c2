"""The leaderboard page ``/datasets/{id}/leaderboard`` (issue 30 §1–2): per grader plan, a
sortable table of harness@version rows, the cost–accuracy chart with its frontier, and a
pass-rate trend per harness id over its versions and over the dataset's versions. Reads
``services.leaderboards.get_leaderboard`` (one call per dataset version for the second trend,
the newest :data:`TREND_VERSIONS` only); the page holds no rules.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response

from benchbook.contracts.leaderboard import (
    LEADERBOARD_SELECTS,
    LEADERBOARD_SORTS,
    Leaderboard,
    LeaderboardRow,
)
from benchbook.datasets.versions import sort_versions
from benchbook.errors import BenchbookError
from benchbook.services import datasets, leaderboards
from benchbook.web import charts
from benchbook.web.errors import PageRoute
from benchbook.web.render import render, run_url
from benchbook.web.session import PageDep

TREND_VERSIONS = 8
"""Dataset versions the "over dataset versions" trend reads (the newest)."""

router = APIRouter(route_class=PageRoute, include_in_schema=False)


@router.get("/datasets/{dataset_id}/leaderboard")
def leaderboard_page(
    request: Request,
    page: PageDep,
    dataset_id: str,
    v: str = "latest",
    select: str = "latest",
    sort: str = "pass_rate",
    tag: str = "",
    plan: str = "",
    partial: bool = False,
) -> Response:
    """The board of one dataset version; an unknown ``select``/``sort`` is a 400 naming it,
    as in the API; ``partial`` also shows subset runs, grouped apart."""
    board = leaderboards.get_leaderboard(
        page.ctx,
        dataset_id,
        v,
        select,  # type: ignore[arg-type]  # checked by the service (400)
        sort,  # type: ignore[arg-type]
        tag.strip() or None,
        plan.strip() or None,
        partial,
    )
    version = board.dataset.rpartition("@")[2]
    groups = [
        {
            "group": g,
            "chart": charts.cost_accuracy(
                g.rows, {r.scorecard_id: run_url(r.run_id) for r in g.rows}
            ),
        }
        for g in board.groups
    ]
    return render(
        request,
        page,
        "leaderboard.html",
        nav="datasets",
        board=board,
        dataset_id=dataset_id,
        version=version,
        groups=groups,
        versions=[i.version for i in datasets.list_dataset_versions(page.ctx, dataset_id)],
        trends=_trends(page, dataset_id, board),
        selects=LEADERBOARD_SELECTS,
        sorts=LEADERBOARD_SORTS,
        select=select,
        sort=sort,
        partial=partial,
        tag=tag.strip(),
        plan=plan.strip(),
    )


def _trends(page: Any, dataset_id: str, board: Leaderboard) -> list[dict[str, Any]]:
    """Per harness id of the board's first group: its pass rate over its versions (this
    dataset version) and, for its newest version, over the dataset's versions (oldest first).
    Only harness ids with two or more points get a chart."""
    if not board.groups:
        return []
    group = board.groups[0]
    by_id: dict[str, list[LeaderboardRow]] = {}
    for row in group.rows:
        by_id.setdefault(row.harness_id, []).append(row)
    across = _across_dataset_versions(page, dataset_id, group.plan_hash)
    out = []
    for harness_id, rows in sorted(by_id.items()):
        order = sort_versions(r.harness_version for r in rows)
        by_version = {r.harness_version: r for r in rows}
        newest = by_version[order[-1]].harness
        points = across.get(newest, {})
        item: dict[str, Any] = {"harness_id": harness_id, "versions": None, "datasets": None}
        if len(order) >= 2:
            item["versions"] = charts.trend(
                order,
                [by_version[v].pass_rate for v in order],
                [run_url(by_version[v].run_id) for v in order],
            )
        if len(points) >= 2:
            labels = sort_versions(points)
            item["datasets"] = charts.trend(
                labels,
                [points[v].pass_rate for v in labels],
                [run_url(points[v].run_id) for v in labels],
            )
            item["newest"] = newest
        if item["versions"] or item["datasets"]:
            out.append(item)
    return out


def _across_dataset_versions(
    page: Any, dataset_id: str, plan_hash: str
) -> dict[str, dict[str, LeaderboardRow]]:
    """harness@version → dataset version → its row under ``plan_hash`` on that version."""
    out: dict[str, dict[str, LeaderboardRow]] = {}
    try:
        versions = datasets.list_dataset_versions(page.ctx, dataset_id)[:TREND_VERSIONS]
    except BenchbookError:
        return out
    for info in versions:
        board = leaderboards.get_leaderboard(page.ctx, dataset_id, info.version, plan=plan_hash)
        for group in board.groups:
            for row in group.rows:
                out.setdefault(row.harness, {})[info.version] = row
    return out
