"""The cost–accuracy Pareto frontier of a set of scorecards (Kapoor et al. 2025, "Holistic Agent
Leaderboard": agents are read by pass rate against cost, and only the non-dominated ones matter).

A point is ``(key, cost per case in USD, pass rate in [0, 1])``. Point A dominates B when A costs
no more and passes no less, and is strictly better in one of the two. The frontier is every point
no other point dominates. Intervals play no part: a point with a wider Wilson interval is still
dominated by a cheaper, better point estimate (the chart shows the interval; the frontier is of
the estimates). Identical points do not dominate each other, so ties are all on the frontier.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


def pareto_frontier(points: Sequence[tuple[K, float, float]]) -> list[K]:
    """The keys of the non-dominated points, cheapest first (ties by key order of ``points``).

    Args:
        points: ``(key, cost_usd, pass_rate)``; keys unique; costs ≥ 0 (finite).

    Returns:
        The frontier's keys ordered by cost ascending, then pass rate descending — the order
        the frontier line is drawn in.

    O(n log n): sorted by cost ascending and pass rate descending, a point is on the frontier
    when its pass rate is above every cheaper point's, or equals the best so far at the same
    cost (a tie).
    """
    ordered = sorted(enumerate(points), key=lambda p: (p[1][1], -p[1][2], p[0]))
    out: list[K] = []
    best: tuple[float, float] | None = None  # (cost, rate) of the last frontier point
    for _, (key, cost, rate) in ordered:
        if best is None or rate > best[1] or (rate == best[1] and cost == best[0]):
            out.append(key)
            best = (cost, rate)
    return out
