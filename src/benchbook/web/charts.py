"""Server-rendered SVG charts (no script, no CDN: the dashboard works offline): the geometry of
the leaderboard's cost–accuracy chart and of a harness's pass-rate trend. Functions here only
compute coordinates in a fixed ``viewBox``; ``templates/_charts.html`` draws them, and CSS
scales the SVG to its box, so the same chart reads at 390 px and at 1280 px.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from benchbook import numbers
from benchbook.contracts.leaderboard import LeaderboardRow

WIDTH, HEIGHT = 400, 260
LEFT, RIGHT, TOP, BOTTOM = 48, 24, 14, 42
"""The plot area's margins inside the viewBox (axis labels live in them)."""


@dataclass(frozen=True)
class Point:
    """One scorecard: ``x``/``y`` its centre, ``low``/``high`` the interval's ends (y), all in
    viewBox units; ``label`` the short text beside it and ``title`` its hover text."""

    x: float
    y: float
    low: float
    high: float
    label: str
    title: str
    href: str
    frontier: bool
    scorecard_id: str
    cost_per_case_usd: float
    pass_rate: float


@dataclass(frozen=True)
class Chart:
    """A chart's points, its frontier polyline (``path``: SVG path data, empty when none),
    axis ticks ``(position, text)`` and the plot box."""

    points: list[Point]
    path: str
    x_ticks: list[tuple[float, str]]
    y_ticks: list[tuple[float, str]]
    x_title: str
    y_title: str
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    right: int = WIDTH - RIGHT
    top: int = TOP
    bottom: int = HEIGHT - BOTTOM


def nice_step(span: float, ticks: int = 4) -> float:
    """A 1-2-5 step that cuts ``span`` (> 0) into about ``ticks`` parts."""
    raw = span / ticks
    power = 10.0 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if raw <= m * power:
            return m * power
    return 10 * power


def _y(rate: float) -> float:
    return TOP + (1 - rate) * (HEIGHT - BOTTOM - TOP)


def _y_ticks() -> list[tuple[float, str]]:
    return [(_y(r / 100), f"{r}%") for r in range(0, 101, 25)]


def cost_accuracy(rows: Sequence[LeaderboardRow], href: dict[str, str]) -> Chart | None:
    """Pass rate (y, 0–100%, the Wilson interval as an error bar) against cost per case (x,
    from $0 to a rounded maximum) of the rows that have both; the frontier drawn cheapest
    first. None when no row has both. ``href``: scorecard id → the run page's link."""
    shown = [r for r in rows if r.pass_rate is not None and r.cost_per_case_usd is not None]
    if not shown:
        return None
    top_cost = max(r.cost_per_case_usd or 0.0 for r in shown)
    # about two steps: at most four tick labels such as "$0.00004" side by side, which stay
    # apart in the 400-unit viewBox at any width (five collided at 1280 and 390 px)
    step = nice_step(top_cost, ticks=2) if top_cost > 0 else 1.0
    x_max = step * math.ceil(top_cost / step) if top_cost > 0 else 1.0
    x_max = x_max if x_max > top_cost else x_max + step
    plot_w = WIDTH - RIGHT - LEFT

    def x(cost: float) -> float:
        return LEFT + cost / x_max * plot_w

    points = []
    for r in shown:
        rate, cost = r.pass_rate or 0.0, r.cost_per_case_usd or 0.0
        ci = r.pass_interval
        title = f"{r.harness}: {numbers.percent(rate)}"
        if ci is not None:
            title += f" [{numbers.percent(ci.low)}, {numbers.percent(ci.high)}]"
        title += f" at {numbers.usd(cost)} per case"
        points.append(
            Point(
                x=round(x(cost), 2),
                y=round(_y(rate), 2),
                low=round(_y(ci.low if ci else rate), 2),
                high=round(_y(ci.high if ci else rate), 2),
                label=str(r.rank),
                title=title + (" — on the frontier" if r.frontier else ""),
                href=href.get(r.scorecard_id, ""),
                frontier=r.frontier,
                scorecard_id=r.scorecard_id,
                cost_per_case_usd=cost,
                pass_rate=rate,
            )
        )
    points = _merge_labels(points)
    on = sorted((p for p in points if p.frontier), key=lambda p: (p.x, -p.pass_rate))
    path = " ".join(f"{'M' if i == 0 else 'L'}{p.x},{p.y}" for i, p in enumerate(on))
    count = round(x_max / step)
    x_ticks = [(round(x(i * step), 2), numbers.usd(i * step)) for i in range(count + 1)]
    return Chart(points, path, x_ticks, _y_ticks(), "cost per case", "pass rate")


LABEL_CLEARANCE = 10.0
"""Points whose label anchors are closer than this (viewBox units) share one label."""


def _merge_labels(points: list[Point]) -> list[Point]:
    """Rows at (nearly) the same cost and pass rate drew their rank labels on top of each
    other: the first (best-ranked) point of such a cluster carries every rank (``2·3``), the
    others none."""
    labels = [p.label for p in points]
    carriers: list[int] = []
    for i, p in enumerate(points):  # in rank order
        near = next(
            (
                c
                for c in carriers
                if abs(points[c].x - p.x) < LABEL_CLEARANCE
                and abs(points[c].y - p.y) < LABEL_CLEARANCE
            ),
            None,
        )
        if near is None:
            carriers.append(i)
        else:
            labels[near] = f"{labels[near]}·{p.label}"
            labels[i] = ""
    return [replace(p, label=label) for p, label in zip(points, labels, strict=True)]


def trend(labels: Sequence[str], rates: Sequence[float | None], hrefs: Sequence[str]) -> Chart:
    """Pass rate at each of ``labels`` (harness versions or dataset versions, in order), evenly
    spaced left to right, joined by a line; a None rate leaves its label without a point."""
    n = len(labels)
    pad = 28  # the first and last points clear the axis and its tick labels
    plot_w = WIDTH - RIGHT - LEFT - 2 * pad

    def x(i: int) -> float:
        return LEFT + pad + (plot_w / 2 if n == 1 else i * plot_w / (n - 1))

    points = [
        Point(
            x=round(x(i), 2),
            y=round(_y(rate), 2),
            low=round(_y(rate), 2),
            high=round(_y(rate), 2),
            label=numbers.percent(rate, 0),
            title=f"{label}: {numbers.percent(rate)}",
            href=href,
            frontier=False,
            scorecard_id="",
            cost_per_case_usd=0.0,
            pass_rate=rate,
        )
        for i, (label, rate, href) in enumerate(zip(labels, rates, hrefs, strict=True))
        if rate is not None
    ]
    path = " ".join(f"{'M' if i == 0 else 'L'}{p.x},{p.y}" for i, p in enumerate(points))
    x_ticks = [(round(x(i), 2), label) for i, label in enumerate(labels)]
    return Chart(points, path, x_ticks, _y_ticks(), "version", "pass rate")
