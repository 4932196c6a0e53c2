"""Scorecard summaries (SPEC H.6): Wilson interval, pass@k, pass^k, metrics, counts, latency."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any

import pytest
from statsmodels.stats.proportion import proportion_confint

from benchbook.contracts.run import CaseResult, Trace, Usage
from benchbook.contracts.score import Score
from benchbook.eval.scorecards import (
    ScorecardBuilder,
    nearest_rank,
    pass_at_k,
    pass_hat_k,
    wilson_interval,
)


def _result(
    case_id: str,
    sample: int,
    passed: bool | None,
    status: str = "ok",
    duration_ms: int = 0,
    scores: list[Score] | None = None,
    **extra: object,
) -> CaseResult:
    return CaseResult.model_validate(
        {
            "case_id": case_id,
            "sample": sample,
            "status": status,
            "passed": passed,
            "duration_ms": duration_ms,
            "scores": scores or [],
            **extra,
        }
    )


GRID = [(c, n) for n in (1, 2, 3, 7, 10, 50, 1000) for c in sorted({0, 1, n // 3, n - 1, n})]


@pytest.mark.parametrize(("count", "nobs"), GRID)
def test_the_wilson_interval_equals_statsmodels(count: int, nobs: int) -> None:
    low, high = proportion_confint(count, nobs, alpha=0.05, method="wilson")
    interval = wilson_interval(count, nobs)
    assert interval.low == pytest.approx(float(low), abs=1e-12)
    assert interval.high == pytest.approx(float(high), abs=1e-12)
    assert interval.level == 0.95 and interval.method == "wilson"


def test_a_wilson_interval_of_no_pairs_is_refused() -> None:
    with pytest.raises(ValueError):
        wilson_interval(0, 0)


def _repeats_table() -> list[CaseResult]:
    """Five cases, repeats = 5. Passing samples: A 5/5, B 0/5, C 2/5, D 4/5 (its fifth sample
    an errored harness), E 1/3 (two samples not run)."""
    plan = {"A": [True] * 5, "B": [False] * 5, "C": [True, False, True, False, False]}
    plan["D"] = [True, True, True, True, False]
    results = [_result(cid, i, p) for cid, row in plan.items() for i, p in enumerate(row)]
    results[-1] = _result("D", 4, False, status="error", error="timeout")
    results += [_result("E", 0, False), _result("E", 1, True), _result("E", 2, False)]
    results += [_result("E", 3, None, status="not_run"), _result("E", 4, None, "not_run")]
    return results


def test_pass_at_k_and_pass_hat_k_match_a_hand_computed_table() -> None:
    builder = ScorecardBuilder(repeats=5)
    for result in _repeats_table():
        builder.add(result)
    summary = builder.summary()
    # pass@1 per case = c/n: A 1, B 0, C 2/5, D 4/5, E 1/3 (E has 3 finished samples).
    pass1 = (1 + 0 + Fraction(2, 5) + Fraction(4, 5) + Fraction(1, 3)) / 5
    assert pass1 == Fraction(38, 75)
    # pass@2 = 1 - C(n-c,2)/C(n,2): A 1, B 0, C 1-3/10, D 1 (n-c=1<2), E 1-C(2,2)/C(3,2)=2/3.
    pass2 = (1 + 0 + (1 - Fraction(3, 10)) + 1 + Fraction(2, 3)) / 5
    # pass^2 = C(c,2)/C(n,2): A 1, B 0, C 1/10, D 6/10, E 0.
    hat2 = (1 + 0 + Fraction(1, 10) + Fraction(6, 10) + 0) / 5
    # k = 5: E (3 samples) is left out; pass@5 = 1 iff c ≥ 1, pass^5 = 1 iff c = 5.
    pass5, hat5 = Fraction(3, 4), Fraction(1, 4)
    assert summary["pass_at_k"]["1"] == pytest.approx(float(pass1), abs=1e-12)
    assert summary["pass_at_k"]["2"] == pytest.approx(float(pass2), abs=1e-12)
    assert summary["pass_hat_k"]["2"] == pytest.approx(float(hat2), abs=1e-12)
    assert summary["pass_at_k"]["5"] == pytest.approx(float(pass5), abs=1e-12)
    assert summary["pass_hat_k"]["5"] == pytest.approx(float(hat5), abs=1e-12)
    assert sorted(summary["pass_at_k"]) == ["1", "2", "3", "4", "5"]


def test_not_run_pairs_are_excluded_and_errors_count_as_failed() -> None:
    builder = ScorecardBuilder(repeats=5)
    for result in _repeats_table():
        builder.add(result)
    summary = builder.summary()
    # passed samples: 5 + 0 + 2 + 4 + 1 = 12 of 5 + 5 + 5 + 5 + 3 = 23 finished pairs.
    assert (summary["n"], summary["passed"], summary["errors"]) == (23, 12, 1)
    assert summary["not_run"] == 2 and summary["cases"] == 5
    assert summary["pass_rate"] == pytest.approx(12 / 23)
    low, high = proportion_confint(12, 23, alpha=0.05, method="wilson")
    assert summary["pass_interval"].low == pytest.approx(float(low), abs=1e-12)
    assert summary["pass_interval"].high == pytest.approx(float(high), abs=1e-12)


def test_an_empty_scorecard_has_no_pass_rate() -> None:
    summary = ScorecardBuilder(repeats=3).summary()
    assert summary["n"] == 0 and summary["pass_rate"] is None
    assert summary["pass_interval"] is None and summary["pass_at_k"] == {}
    assert summary["latency"].p50_ms is None


def _subsets(n: int, c: int, k: int) -> tuple[Fraction, Fraction]:
    """Brute force over every k-subset of n samples of which the first c pass."""
    subsets = list(itertools.combinations(range(n), k))
    some = sum(any(i < c for i in s) for s in subsets)
    every = sum(all(i < c for i in s) for s in subsets)
    return Fraction(some, len(subsets)), Fraction(every, len(subsets))


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_pass_at_k_and_pass_hat_k_agree_with_enumerating_every_subset(n: int) -> None:
    for c in range(n + 1):
        for k in range(1, n + 1):
            some, every = _subsets(n, c, k)
            assert pass_at_k(n, c, k) == pytest.approx(float(some), abs=1e-12)
            assert pass_hat_k(n, c, k) == pytest.approx(float(every), abs=1e-12)


def test_pass_at_k_stays_finite_for_many_samples() -> None:
    value = pass_at_k(200, 3, 100)
    exact = 1 - Fraction(math.comb(197, 100), math.comb(200, 100))
    assert value == pytest.approx(float(exact), rel=1e-12)


def test_metric_summaries_average_only_graded_scores() -> None:
    def score(value: float, passed: bool | None, status: str = "ok") -> Score:
        return Score(grader="numeric", metric="numeric", value=value, passed=passed, status=status)

    builder = ScorecardBuilder()
    builder.add(_result("a", 0, True, scores=[score(1.0, True)]))
    builder.add(_result("b", 0, False, scores=[score(0.0, False)]))
    builder.add(_result("c", 0, True, scores=[score(1.0, True)]))
    builder.add(_result("d", 0, None, scores=[score(0.0, None, "error")]))
    builder.add(_result("e", 0, None, scores=[score(0.0, None, "skipped")]))
    summary = builder.summary()["metrics"]["numeric"]
    assert (summary.n, summary.passed, summary.errors, summary.skipped) == (3, 2, 1, 1)
    assert summary.mean == pytest.approx(2 / 3)
    assert (summary.min, summary.max) == (0.0, 1.0)


def test_latency_percentiles_are_nearest_rank_over_finished_pairs() -> None:
    builder = ScorecardBuilder()
    for i, ms in enumerate([70, 10, 100, 40, 20, 90, 30, 60, 50, 80]):
        builder.add(_result(f"c{i}", 0, True, duration_ms=ms))
    builder.add(_result("late", 0, None, status="not_run", duration_ms=99_999))
    latency = builder.summary()["latency"]
    # N = 10: p50 → rank ⌈5⌉ = 5th smallest = 50; p95 → rank ⌈9.5⌉ = 10 → 100.
    assert (latency.p50_ms, latency.p95_ms, latency.max_ms) == (50.0, 100.0, 100.0)
    # N = 20 values 1..20: p95 → rank 19; p50 → rank 10.
    assert nearest_rank(list(range(1, 21)), 95) == 19.0
    assert nearest_rank(list(range(1, 21)), 50) == 10.0


def test_tokens_and_cost_are_summed_from_traces_results_and_given_usage() -> None:
    builder = ScorecardBuilder()
    trace = Trace(usage=Usage(input_tokens=100, output_tokens=10), cost_usd=0.25)
    builder.add(_result("a", 0, True, trace=trace))  # cost from the trace
    builder.add(_result("b", 0, True, cost_usd=0.5), Usage(input_tokens=7, output_tokens=3))
    builder.add(_result("c", 0, False, status="error", cost_usd=None))  # unpriced
    summary = builder.summary()
    assert (summary["tokens_input"], summary["tokens_output"]) == (107, 13)
    assert summary["cost_usd"] == pytest.approx(0.75)


def test_finish_builds_a_valid_scorecard_with_the_callers_header() -> None:
    from datetime import UTC, datetime

    from benchbook.contracts.run import RunPlan

    builder = ScorecardBuilder(repeats=2)
    builder.add(_result("a", 0, True))
    builder.add(_result("a", 1, False))
    card = builder.finish(
        id="sc_1",
        run_id="run_1",
        plan=RunPlan(),
        plan_hash="0" * 64,
        dataset="d@1.0.0",
        dataset_content_hash="1" * 64,
        harness="h@1.0.0",
        created_at=datetime.now(UTC),
    )
    assert card.repeats == 2 and card.n == 2 and card.pass_rate == 0.5
    assert card.pass_hat_k["2"] == 0.0 and card.pass_at_k["2"] == 1.0


def _localization_detail(line: tuple[int, int, int], auc: float) -> dict[str, Any]:
    """A ``localization`` score's detail with ``line`` = (intersection, gold, pred) at every
    level (the other fields of ``score_instance`` are not read by the aggregate)."""
    common, gold, pred = line
    level = {
        "intersection": common,
        "gold_size": gold,
        "pred_size": pred,
        "coverage": common / gold,
        "precision": common / pred,
        "f1": 2 * common / (gold + pred),
    }
    levels = ("file", "symbol", "span", "line")
    return {
        "num_steps": 1,
        "final": {lv: level for lv in levels},
        "trajectory": {
            "steps": [],
            "auc_coverage": {lv: auc for lv in levels},
            "redundancy": {lv: 0.0 for lv in levels},
        },
        "editloc": None,
        "ranked": {"mrr": 1.0},
    }


def test_localization_scores_give_micro_and_macro_aggregates_with_both_error_views() -> None:
    def score(detail: dict[str, Any], status: str = "ok") -> Score:
        return Score(grader="localization", metric="localization", value=0.0, status=status,
                     detail=detail)  # fmt: skip

    builder = ScorecardBuilder()
    builder.add(_result("a", 0, None, scores=[score(_localization_detail((2, 4, 2), 0.5))]))
    builder.add(_result("b", 0, None, scores=[score(_localization_detail((1, 1, 4), 1.0))]))
    builder.add(_result("c", 0, None, scores=[score({"error": "no gold"}, "error")]))
    builder.add(_result("d", 0, None, scores=[score({"reason": "no checkout"}, "skipped")]))
    builder.add(_result("e", 0, True, scores=[Score(grader="numeric", metric="numeric", value=1)]))
    card = builder.summary()["localization"]
    assert (card["instances"], card["errored"]) == (3, 1)  # the skipped one is in neither
    # micro: Σ∩/ΣG = 3/5, Σ∩/ΣP = 3/6; macro over scored rows: (0.5 + 1)/2, (1 + 0.25)/2
    assert card["micro"]["line"]["coverage"] == pytest.approx(3 / 5)
    assert card["micro"]["line"]["precision"] == pytest.approx(3 / 6)
    assert card["macro"]["line"]["coverage"] == pytest.approx(0.75)
    assert card["macro"]["line"]["precision"] == pytest.approx(0.625)
    # errored rows counted as 0: (0.5 + 1 + 0)/3
    assert card["macro_all"]["line"]["coverage"] == pytest.approx(0.5)
    assert card["auc_coverage"]["file"] == pytest.approx(0.75)


def test_a_scorecard_without_a_localization_grader_has_no_localization_aggregates() -> None:
    builder = ScorecardBuilder()
    builder.add(_result("a", 0, True, scores=[Score(grader="numeric", metric="numeric", value=1)]))
    assert builder.summary()["localization"] is None


def _summary(results: list[CaseResult], repeats: int = 1) -> dict[str, Any]:
    builder = ScorecardBuilder(repeats=repeats)
    for result in results:
        builder.add(result)
    return builder.summary()


def test_a_plan_that_only_measures_has_no_pass_rate() -> None:
    """Localization gives coverage and precision, never a pass: the run said ``pass rate
    0.00% (0/3)`` as if every case had failed."""
    measured = [Score(grader="localization", metric="localization", value=0.5, status="ok")]
    results = [_result(f"c{i}", 0, None, scores=measured) for i in range(3)]
    results.append(_result("c3", 0, False, status="error", error="timeout"))
    summary = _summary(results, repeats=1)
    assert (summary["n"], summary["passed"], summary["errors"]) == (4, 0, 1)
    assert summary["pass_rate"] is None and summary["pass_interval"] is None
    assert summary["pass_at_k"] == {} and summary["pass_hat_k"] == {}
    assert summary["metrics"]["localization"].mean == 0.5


def test_one_verdict_among_measured_pairs_gives_a_pass_rate_over_all_of_them() -> None:
    results = [_result("a", 0, None), _result("b", 0, True), _result("c", 0, None)]
    summary = _summary(results)
    assert summary["pass_rate"] == pytest.approx(1 / 3)
    assert summary["pass_at_k"] == {"1": pytest.approx(1 / 3)}


def test_a_run_whose_every_pair_errored_still_rates_them_failed() -> None:
    results = [_result(c, 0, False, status="error", error="boom") for c in "ab"]
    summary = _summary(results)
    assert summary["pass_rate"] == 0.0
    assert summary["pass_interval"] is not None


def test_costs_are_summed_exactly_and_judge_calls_apart_from_the_harness() -> None:
    """Issue 28: the cost total was a float sum (0.1 + 0.2 = 0.30000000000000004) and judge
    spend was nowhere; now both are decimal sums, the judges' kept apart."""

    def judge_score(cost: float | None, tokens: int) -> Score:
        call = {"input_tokens": tokens, "output_tokens": 7, "cost_usd": cost}
        return Score(
            grader="judge", metric="judge:j:c", value=1.0, passed=True, detail={"call": call}
        )

    builder = ScorecardBuilder()
    builder.add(_result("a", 0, True, cost_usd=0.1, scores=[judge_score(0.1, 100)]))
    builder.add(_result("b", 0, True, cost_usd=0.2, scores=[judge_score(0.2, 50)]))
    builder.add(_result("c", 0, True, scores=[judge_score(None, 10)]))  # unpriced: adds $0
    summary = builder.summary()
    assert summary["cost_usd"] == 0.3 and summary["judge_cost_usd"] == 0.3
    assert (summary["judge_tokens_input"], summary["judge_tokens_output"]) == (160, 21)
    assert summary["tokens_input"] == 0  # the harness's usage is its own


def test_grader_errors_are_failed_counted_apart_and_give_no_verdict() -> None:
    """Issue 28: a pair whose grader could not decide is not passed, counted in
    ``grader_errors`` apart from harness errors; when every graded pair is one, no pass rate."""
    builder = ScorecardBuilder()
    builder.add(_result("a", 0, False, grader_error="judge:j:c: unparseable judge reply"))
    builder.add(_result("b", 0, False, status="error", error="exit code 1"))
    summary = builder.summary()
    assert (summary["n"], summary["passed"], summary["errors"], summary["grader_errors"]) == (
        2,
        0,
        1,
        1,
    )
    assert summary["pass_rate"] is None
    builder.add(_result("c", 0, True))
    summary = builder.summary()
    assert (summary["passed"], summary["grader_errors"], summary["pass_rate"]) == (1, 1, 1 / 3)
