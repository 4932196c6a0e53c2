"""Paired comparison statistics and the CI gate (SPEC H.7), on hand-made outcomes.

Oracles: statsmodels' ``mcnemar(table, exact=True)`` for the p-value and
``scipy.stats.bootstrap(..., paired=True, method="percentile")`` for the interval.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

from benchbook.contracts.comparison import Outcome
from benchbook.contracts.run import RunPlan
from benchbook.contracts.scorecard import MetricSummary, Scorecard
from benchbook.eval import compare as compare_module
from benchbook.eval.compare import (
    compare_outcomes,
    gate,
    mcnemar_exact_p,
    paired_bootstrap,
    transition,
)
from benchbook.eval.compare_reports import verdict_line

Side = list[tuple[str, int, Outcome | None]]


def card(card_id: str, **extra: object) -> Scorecard:
    values: dict[str, object] = {
        "id": card_id,
        "run_id": "run_" + card_id,
        "plan": RunPlan(),
        "plan_hash": "p" * 64,
        "dataset": "gsm8k@1.0.0",
        "dataset_content_hash": "d" * 64,
        "harness": "h@1.0.0",
        "created_at": datetime(2026, 12, 1, tzinfo=UTC),
    }
    return Scorecard.model_validate(values | extra)


def table_pair(n: int, fixed: int, regressed: int, both: int) -> tuple[Side, Side]:
    """n single-sample cases: ``fixed`` fail→pass, ``regressed`` pass→fail, ``both`` pass→pass,
    the rest fail→fail."""
    base: Side = []
    cand: Side = []
    for i in range(n):
        if i < fixed:
            b, c = "failed", "passed"
        elif i < fixed + regressed:
            b, c = "passed", "failed"
        elif i < fixed + regressed + both:
            b, c = "passed", "passed"
        else:
            b, c = "failed", "failed"
        base.append((f"c{i}", 0, b))  # type: ignore[arg-type]
        cand.append((f"c{i}", 0, c))  # type: ignore[arg-type]
    return base, cand


@pytest.mark.parametrize(
    "fixed, regressed",
    [
        *[(0, 0), (1, 0), (0, 7), (40, 10), (12, 10), (3, 25), (500, 480), (10, 10)],
        *[(20_000, 19_700), (49_990, 50_010), (30_000, 31_000), (0, 1200), (61_000, 1)],
    ],
)
def test_the_mcnemar_p_value_equals_statsmodels_exact_mcnemar(fixed: int, regressed: int) -> None:
    table = [[100, regressed], [fixed, 50]]  # rows: baseline pass/fail; cols: candidate pass/fail
    oracle = mcnemar(table, exact=True).pvalue
    assert mcnemar_exact_p(fixed, regressed) == pytest.approx(oracle, rel=1e-12, abs=1e-15)


def test_forty_fixed_ten_regressed_of_1319_is_significant_and_twelve_ten_is_not() -> None:
    base, cand = table_pair(1319, 40, 10, 700)
    significant = compare_outcomes(card("a"), card("b"), base, cand)
    assert significant.counts.fixed == 40 and significant.counts.regressed == 10
    assert significant.pass_rate_delta == pytest.approx(30 / 1319)
    assert significant.significant and significant.mcnemar.p_value < 0.001
    assert significant.delta_interval is not None and significant.delta_interval.low > 0
    base, cand = table_pair(1319, 12, 10, 700)
    flat = compare_outcomes(card("a"), card("b"), base, cand)
    assert not flat.significant and flat.mcnemar.p_value == pytest.approx(0.8318, abs=1e-4)
    assert flat.delta_interval is not None
    assert flat.delta_interval.low < 0 < flat.delta_interval.high


def test_the_bootstrap_interval_is_reproducible_with_its_seed_and_brackets_the_delta() -> None:
    base, cand = table_pair(1319, 40, 10, 700)
    one = compare_outcomes(card("a"), card("b"), base, cand, seed=7)
    again = compare_outcomes(card("a"), card("b"), base, cand, seed=7)
    assert one.delta_interval == again.delta_interval
    assert one.delta_interval is not None
    assert one.delta_interval.seed == 7 and one.delta_interval.resamples == 10_000
    # the estimates are multiples of 1/1319, so two seeds may share quantiles; eight do not
    others = {
        (i.low, i.high)
        for seed in range(8, 16)
        if (i := compare_outcomes(card("a"), card("b"), base, cand, seed=seed).delta_interval)
    }
    assert len(others | {(one.delta_interval.low, one.delta_interval.high)}) > 1
    assert one.pass_rate_delta is not None
    assert one.delta_interval.low <= one.pass_rate_delta <= one.delta_interval.high


def test_the_bootstrap_interval_agrees_with_scipys_paired_percentile_bootstrap() -> None:
    base, cand = table_pair(1319, 40, 10, 700)
    b = np.array([o == "passed" for _, _, o in base], dtype=float)
    c = np.array([o == "passed" for _, _, o in cand], dtype=float)
    oracle = stats.bootstrap(
        (b, c),
        lambda x, y, axis: np.mean(y, axis=axis) - np.mean(x, axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=10_000,
        method="percentile",
        rng=np.random.default_rng(1),
        batch=500,
    ).confidence_interval
    ours = compare_outcomes(card("a"), card("b"), base, cand, seed=1).delta_interval
    assert ours is not None
    # Monte Carlo error of a 2.5% quantile of 10,000 draws here is ~0.0006
    assert ours.low == pytest.approx(oracle.low, abs=0.002)
    assert ours.high == pytest.approx(oracle.high, abs=0.002)


def test_repeats_resample_whole_cases_and_the_delta_is_over_pairs() -> None:
    tally = {(2, 2): 10, (-1, 2): 10, (0, 1): 5}  # (diff, paired samples): cases
    interval = paired_bootstrap(tally, resamples=2000, seed=3)
    assert interval is not None
    observed = (20 - 10) / 45
    assert interval.low <= observed <= interval.high
    assert paired_bootstrap(dict(reversed(tally.items())), resamples=2000, seed=3) == interval
    assert paired_bootstrap({}, resamples=10) is None
    with pytest.raises(ValueError, match="resamples"):
        paired_bootstrap(tally, resamples=0)
    # through compare: case a passes 2 of 2 samples more, b loses 1 of 2, c unchanged
    base: Side = [("a", 0, "failed"), ("a", 1, "failed"), ("b", 0, "passed"), ("b", 1, "passed")]
    cand: Side = [("a", 0, "passed"), ("a", 1, "passed"), ("b", 0, "passed"), ("b", 1, "failed")]
    base.append(("c", 0, "passed"))
    cand.append(("c", 0, "passed"))
    result = compare_outcomes(card("x"), card("y"), base, cand, resamples=2000, seed=3)
    assert result.paired == 5 and result.pass_rate_delta == pytest.approx(1 / 5)
    expected = paired_bootstrap({(2, 2): 1, (-1, 2): 1, (0, 1): 1}, resamples=2000, seed=3)
    assert result.delta_interval == expected


@pytest.mark.parametrize(
    "before, after, expected",
    [
        ("failed", "passed", "fixed"),
        ("error", "passed", "fixed"),
        ("passed", "failed", "regressed"),
        ("passed", "error", "regressed"),
        ("passed", "passed", "still_passing"),
        ("error", "failed", "still_failing"),
        ("passed", None, "missing_in_candidate"),
        (None, "failed", "new_in_candidate"),
    ],
)
def test_each_pair_gets_its_transition(
    before: Outcome | None, after: Outcome | None, expected: str
) -> None:
    assert transition(before, after) == expected


def test_missing_new_and_not_run_pairs_are_outside_the_paired_statistics() -> None:
    base: Side = [("a", 0, "passed"), ("b", 0, "failed"), ("c", 0, "passed"), ("d", 0, None)]
    cand: Side = [("a", 0, "failed"), ("b", 0, "passed"), ("e", 0, "passed"), ("d", 0, None)]
    result = compare_outcomes(card("x"), card("y"), base, cand)
    assert [(c.case_id, c.transition) for c in result.cases] == [
        ("a", "regressed"),
        ("b", "fixed"),
        ("c", "missing_in_candidate"),
        ("e", "new_in_candidate"),
    ]
    assert result.paired == 2 and result.pass_rate_delta == 0.0
    assert result.mcnemar.fixed == 1 and result.mcnemar.regressed == 1


def test_metric_cost_and_latency_deltas_come_from_the_two_summaries() -> None:
    m = MetricSummary
    base = card("x", metrics={"numeric": m(n=2, mean=0.5), "regex": m(n=2, mean=1.0)})
    cand = card("y", metrics={"numeric": m(n=2, mean=0.75)}, cost_usd=0.25, tokens_input=10)
    result = compare_outcomes(base, cand, [], [])
    assert list(result.metrics) == ["numeric"]
    assert result.metrics["numeric"].delta == pytest.approx(0.25)
    assert result.cost_usd.delta == pytest.approx(0.25) and result.tokens_input.delta == 10
    assert result.latency_p50_ms.delta is None
    assert result.pass_rate_delta is None and result.delta_interval is None


def test_different_hashes_make_a_comparison_not_comparable_but_still_computed() -> None:
    base, cand = table_pair(10, 1, 2, 3)
    result = compare_outcomes(card("x"), card("y", plan_hash="q" * 64), base, cand)
    assert not result.comparable and result.reasons == ["grader hash differs"]
    assert result.counts.regressed == 2
    verdict = gate(result, "regression")
    assert verdict.exit_code == 2 and verdict.failures == ["not comparable: grader hash differs"]
    other = compare_outcomes(card("x"), card("y", dataset_content_hash="e" * 64), base, cand)
    assert other.reasons == ["dataset content hash differs"]


def test_the_gate_fails_on_regressions_missing_duplicates_and_errors() -> None:
    base: Side = [("a", 0, "passed"), ("b", 0, "passed"), ("c", 0, "failed")]
    assert gate(compare_outcomes(card("x"), card("y"), base, base), "regression").exit_code == 0
    cand: Side = [("a", 0, "failed"), ("c", 0, "error")]
    verdict = gate(compare_outcomes(card("x"), card("y"), base, cand), "regression")
    assert verdict.exit_code == 1
    assert verdict.failures == [
        "1 regressed: a#0",
        "1 missing in candidate: b#0",
        "1 errored in candidate (--allow-errors to accept): c#0",
    ]
    allowed = gate(compare_outcomes(card("x"), card("y"), base, cand), "regression", True)
    assert "errored" not in " ".join(allowed.failures)
    twice: Side = [*base, ("a", 0, "passed")]
    dup = gate(compare_outcomes(card("x"), card("y"), base, twice), "significant-drop")
    assert dup.exit_code == 1 and dup.failures == ["duplicate case ids: a#0"]


def test_significant_drop_fails_only_a_significant_negative_delta() -> None:
    base, cand = table_pair(1319, 10, 40, 700)  # 40 regressed: a significant drop
    drop = compare_outcomes(card("x"), card("y"), base, cand)
    verdict = gate(drop, "significant-drop")
    assert verdict.exit_code == 1 and verdict.failures[0].startswith("significant drop: ")
    base, cand = table_pair(1319, 10, 12, 700)  # 12 regressed: within noise
    assert gate(compare_outcomes(card("x"), card("y"), base, cand), "significant-drop").passed
    base, cand = table_pair(1319, 40, 10, 700)  # a significant gain passes
    assert gate(compare_outcomes(card("x"), card("y"), base, cand), "significant-drop").passed
    assert gate(compare_outcomes(card("x"), card("y"), base, cand), "regression").exit_code == 1


def test_the_verdict_line_names_the_points_interval_p_value_and_verdict() -> None:
    base, cand = table_pair(1319, 10, 40, 700)
    drop = verdict_line(compare_outcomes(card("a"), card("b"), base, cand))
    assert re.fullmatch(r"−2\.3 points, 95% CI \[−\d\.\d, −\d\.\d\], McNemar p = 2\.\de-05: "
                        r"significant drop", drop), drop  # fmt: skip
    gain = verdict_line(compare_outcomes(card("a"), card("b"), cand, base))
    assert gain.startswith("+2.3 points, 95% CI [+") and gain.endswith(": significant gain")
    base, cand = table_pair(1319, 12, 10, 700)
    flat = verdict_line(compare_outcomes(card("a"), card("b"), base, cand))
    assert flat.startswith("+0.2 points") and flat.endswith(
        "McNemar p = 0.83: no significant change"
    )
    empty = verdict_line(compare_outcomes(card("a"), card("b"), [], []))
    assert empty == "no paired cases: nothing to compare"


@pytest.mark.parametrize(
    "base, cand",
    [
        # the same keys in the same order: the zipped pairing
        ([("a", 0, "passed"), ("b", 0, None), ("c", 0, "error")],
         [("a", 0, "failed"), ("b", 0, None), ("c", 0, "passed")]),
        ([("a", 0, "passed"), ("a", 1, "failed"), ("b", 0, None)],
         [("a", 0, "passed"), ("a", 1, "passed"), ("b", 0, "failed")]),
        # keys that differ, repeat or are missing: the general pairing
        ([("a", 0, "passed"), ("b", 0, "failed")], [("b", 0, "passed"), ("a", 0, "failed")]),
        ([("a", 0, "passed"), ("a", 0, "failed")], [("a", 0, "passed"), ("a", 0, "passed")]),
        ([("a", 0, "passed"), ("b", 0, "passed")], [("a", 0, "passed")]),
    ],
)  # fmt: skip
def test_lists_of_outcomes_pair_as_the_general_pairing_does(
    base: list[tuple[str, int, Any]], cand: list[tuple[str, int, Any]]
) -> None:
    zipped = compare_module.pair_outcomes(base, cand)
    general = compare_module.pair_outcomes(iter(base), iter(cand))
    assert zipped.cases == general.cases and zipped.counts == general.counts
    assert (zipped.duplicates, zipped.repeats) == (general.duplicates, general.repeats)
