"""The cost–accuracy frontier on sets of points where it is known."""

from __future__ import annotations

from benchbook.eval.frontier import pareto_frontier


def test_the_frontier_keeps_only_points_no_cheaper_point_beats() -> None:
    points = [
        ("cheap", 0.01, 0.40),
        ("mid", 0.05, 0.70),
        ("dominated", 0.06, 0.65),  # costs more than mid, passes less
        ("best", 0.20, 0.90),
        ("pricey-worse", 0.30, 0.85),
    ]
    assert pareto_frontier(points) == ["cheap", "mid", "best"]


def test_identical_points_are_both_on_the_frontier() -> None:
    points = [("a", 0.02, 0.5), ("b", 0.02, 0.5), ("c", 0.01, 0.3)]
    assert pareto_frontier(points) == ["c", "a", "b"]


def test_equal_pass_rate_at_a_higher_cost_is_dominated() -> None:
    assert pareto_frontier([("x", 0.01, 0.5), ("y", 0.02, 0.5)]) == ["x"]


def test_equal_cost_with_a_lower_pass_rate_is_dominated() -> None:
    assert pareto_frontier([("x", 0.01, 0.5), ("y", 0.01, 0.6)]) == ["y"]


def test_a_dominated_point_stays_off_the_frontier_whatever_its_interval() -> None:
    """The interval is not part of the order: a point whose Wilson interval is wide enough to
    reach above its dominator (few cases) is still dominated by the estimate."""
    from benchbook.eval.scorecards import wilson_interval

    wide = wilson_interval(3, 5)  # 60% of 5 cases: the interval reaches ~0.88
    narrow = wilson_interval(700, 1000)  # 70% of 1000 cases
    assert wide.high > narrow.high
    points = [("narrow", 0.05, 700 / 1000), ("wide", 0.08, 3 / 5)]
    assert pareto_frontier(points) == ["narrow"]


def test_no_points_give_no_frontier_and_one_point_is_its_own_frontier() -> None:
    assert pareto_frontier([]) == []
    assert pareto_frontier([("only", 0.0, 0.0)]) == ["only"]
