"""The cost–accuracy chart's geometry (tester's findings): x tick labels such as
``$0.00003$0.00004`` collided, and rows at the same cost and pass rate drew their ranks on top
of each other."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

from benchbook.contracts.leaderboard import LeaderboardRow
from benchbook.web import charts


def _row(rank: int, cost: float, rate: float) -> LeaderboardRow:
    return LeaderboardRow(
        rank=rank,
        harness=f"h{rank}@1.0.0",
        harness_id=f"h{rank}",
        harness_version="1.0.0",
        run_id=f"run_{rank}",
        scorecard_id=f"sc_{rank}",
        cases=10,
        repeats=1,
        n=10,
        passed=int(rate * 10),
        errors=0,
        pass_rate=rate,
        cost_usd=cost * 10,
        cost_per_case_usd=cost,
        tokens_input=0,
        tokens_output=0,
        created_at=datetime(2026, 12, 4, tzinfo=UTC),
    )


def test_x_tick_labels_are_few_enough_to_stay_apart() -> None:
    for top in (0.00004, 0.000037, 0.021, 0.1, 3.7, 0.0009):
        chart = charts.cost_accuracy([_row(1, top, 0.5), _row(2, top / 7, 0.3)], {})
        assert chart is not None
        ticks = chart.x_ticks
        assert 2 <= len(ticks) <= 4, (top, ticks)
        widest = max(len(text) for _, text in ticks) * 8  # ~units per character at 13 px
        gaps = [b[0] - a[0] for a, b in itertools.pairwise(ticks)]
        assert min(gaps) > widest, (top, ticks)


def test_rows_at_the_same_point_share_one_label() -> None:
    rows = [_row(1, 0.01, 0.9), _row(2, 0.002, 0.5), _row(3, 0.002, 0.5)]
    chart = charts.cost_accuracy(rows, {})
    assert chart is not None
    assert [p.label for p in chart.points] == ["1", "2·3", ""]
