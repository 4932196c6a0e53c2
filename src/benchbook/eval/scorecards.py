"""Scorecard summaries (SPEC H.6), accumulated as results stream by.

:class:`ScorecardBuilder` sees each (case, sample) result once and keeps only small state: per
case a ``[finished samples, passed samples]`` counter pair, per metric running sums, the token
and cost totals, and one ``duration_ms`` integer per finished pair in a compact array (8 bytes a
pair: 0.8 MB for a 100k-pair run) for exact nearest-rank percentiles. Results and traces are
never kept, so a 100k-case run streams through in constant memory per pair.

Counting rules (SPEC H.6):

- ``n`` = pairs whose harness finished or errored (``ok`` + ``error``); ``not_run`` pairs are
  counted apart and excluded from every rate and from latency.
- ``limits`` = ``agent`` pairs that ended at a limit (``{steps: n}``), finished and graded, never
  errors.
- ``passed`` = pairs with ``passed is True``; ``errors`` = pairs whose harness errored, which
  count as failed in the pass rate (they are in ``n``, never in ``passed``); ``grader_errors``
  = finished pairs whose grading could not decide (fail closed: failed, never passed, and no
  verdict — a plan whose every pair is a grader error has no pass rate).
- ``pass_rate`` = passed / n (None when n = 0) with the Wilson (1927) 95% score interval.
  Also None when no grader gave a verdict: pairs whose harness finished exist, but none got a
  pass/fail from any score (a plan that only measures, such as ``localization``: coverage and
  precision, no pass; or graders that errored or skipped on every pair). 0 / n would say every
  case failed when nothing was decided. A run whose every pair errored keeps 0 / n: errors
  count as failed.
- pass@k (Chen et al. 2021) and pass^k (Yao et al. 2024, τ-bench) for k = 1..repeats, per case
  over its finished samples, averaged over the cases with ≥ k finished samples; empty when the
  pass rate is None for want of verdicts.
- per-metric mean/min/max over scores with status ``ok``; error and skipped scores counted.
- tokens and cost summed over the ``ok`` + ``error`` pairs (an unpriced pair adds 0 USD), the
  cost in decimal arithmetic on each pair's cost as written and rounded once; the judges'
  tokens and cost (from each judge call's record) summed apart, the same way;
  latency p50/p95/max in ms over the same pairs, nearest-rank (no interpolation).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from statistics import NormalDist
from typing import Any

from benchbook.contracts.run import CaseResult, Usage
from benchbook.contracts.score import Score
from benchbook.contracts.scorecard import Interval, LatencySummary, MetricSummary, Scorecard
from benchbook.eval.localization import aggregate as localization_aggregate

Z_975 = NormalDist().inv_cdf(0.975)
"""The 0.975 standard-normal quantile (≈ 1.959964), the two-sided 95% critical value."""


def rated(n: int, finished: int, verdicts: int) -> bool:
    """Whether a pass rate applies to ``n`` counted pairs (``ok`` + ``error``) of which
    ``finished`` are ``ok`` and ``verdicts`` of those got a pass/fail from a grader: some pair
    is counted, and either a finished pair got a verdict or none finished (every pair errored:
    errors count as failed). False for a plan that only measures (``localization``)."""
    return n > 0 and (verdicts > 0 or finished == 0)


def wilson_interval(passed: int, n: int, z: float = Z_975) -> Interval:
    """The Wilson score interval for a binomial proportion ``passed / n``.

    Formula (Wilson 1927, "Probable inference, the law of succession, and statistical
    inference"): with p = passed/n, centre = (p + z²/2n) / (1 + z²/n) and half-width
    = z / (1 + z²/n) · √(p(1−p)/n + z²/4n²); clipped to [0, 1].

    Raises:
        ValueError: ``n`` ≤ 0 or ``passed`` outside ``0..n``.
    """
    if n <= 0 or not 0 <= passed <= n:
        raise ValueError(f"need 0 <= passed <= n and n > 0, got passed={passed}, n={n}")
    p = passed / n
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denominator
    return Interval(low=max(0.0, centre - half), high=min(1.0, centre + half), method="wilson")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one problem with ``n`` samples of which ``c`` passed.

    Formula (Chen et al. 2021, "Evaluating Large Language Models Trained on Code", eq. 1 and its
    numerically stable form): 1 − C(n−c, k)/C(n, k) = 1 − ∏_{i=n−c+1}^{n} (1 − k/i); 1.0 when
    n − c < k (every k-subset holds a pass).

    Raises:
        ValueError: unless 0 ≤ c ≤ n and 1 ≤ k ≤ n.
    """
    _check(n, c, k)
    if n - c < k:
        return 1.0
    product = 1.0
    for i in range(n - c + 1, n + 1):
        product *= 1.0 - k / i
    return 1.0 - product


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k for one problem: the chance that k samples drawn without replacement all pass.

    Formula (Yao et al. 2024, "τ-bench", pass^k): C(c, k)/C(n, k) = ∏_{i=0}^{k−1} (c−i)/(n−i),
    computed as that product (no large binomials); 0.0 when c < k.

    Raises:
        ValueError: unless 0 ≤ c ≤ n and 1 ≤ k ≤ n.
    """
    _check(n, c, k)
    if c < k:
        return 0.0
    product = 1.0
    for i in range(k):
        product *= (c - i) / (n - i)
    return product


def _check(n: int, c: int, k: int) -> None:
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")


def nearest_rank(sorted_values: array[int] | list[int], percent: float) -> float | None:
    """The nearest-rank percentile: the value at 1-based rank ⌈percent/100 · N⌉ (min rank 1).

    Returns None for an empty sequence. ``sorted_values`` must be sorted ascending.
    """
    if not sorted_values:
        return None
    rank = max(1, math.ceil(percent / 100 * len(sorted_values)))
    return float(sorted_values[rank - 1])


@dataclass
class _MetricTotals:
    """Running sums of one metric (status ``ok`` scores only, plus error/skipped counts)."""

    n: int = 0
    total: float = 0.0
    low: float = math.inf
    high: float = -math.inf
    passed: int = 0
    errors: int = 0
    skipped: int = 0

    def add(self, score: Score) -> None:
        if score.status == "error":
            self.errors += 1
        elif score.status == "skipped":
            self.skipped += 1
        else:
            self.n += 1
            self.total += score.value
            self.low = min(self.low, score.value)
            self.high = max(self.high, score.value)
            self.passed += score.passed is True

    def summary(self) -> MetricSummary:
        if self.n == 0:
            return MetricSummary(n=0, errors=self.errors, skipped=self.skipped)
        return MetricSummary(
            n=self.n,
            mean=self.total / self.n,
            min=self.low,
            max=self.high,
            passed=self.passed,
            errors=self.errors,
            skipped=self.skipped,
        )


class ScorecardBuilder:
    """Accumulates a scorecard's summary from (case, sample) results, one at a time.

    Args:
        repeats: samples per case in the run (≥ 1); pass@k and pass^k are reported for
            k = 1..repeats.

    Usage::

        builder = ScorecardBuilder(repeats=5)
        for result in results:          # any iterable, streamed
            builder.add(result)
        fields = builder.summary()      # Scorecard summary fields (see :meth:`summary`)
    """

    def __init__(self, repeats: int = 1) -> None:
        if repeats < 1:
            raise ValueError(f"repeats must be >= 1, got {repeats}")
        self.repeats = repeats
        self._per_case: dict[str, list[int]] = {}  # case id → [finished samples, passed samples]
        self._metrics: dict[str, _MetricTotals] = {}
        self._durations_ms: array[int] = array("q")
        self._counts = {"n": 0, "passed": 0, "errors": 0, "grader_errors": 0, "not_run": 0}
        self._limits: dict[str, int] = {}  # agent limit → pairs it ended
        self._finished = self._verdicts = 0  # ok pairs; ok pairs with a pass/fail
        self._tokens = [0, 0, 0, 0]  # harness input, output; judge input, output
        self._cost_usd = Decimal(0)  # exact sums: each cost's shortest repr, rounded once
        self._judge_cost_usd = Decimal(0)
        self._localization: list[dict[str, Any]] = []  # per-pair rows for the aggregates

    def add(self, result: CaseResult, usage: Usage | None = None, limit: str | None = None) -> None:
        """Count one (case, sample) result.

        Args:
            result: the result; its ``trace`` may be None (stored results are read without it).
            usage: the pair's token usage when the result carries no trace; defaults to
                ``result.trace.usage`` (or none).
            limit: the ``agent`` limit that ended the pair when the result carries no trace;
                defaults to ``result.trace.limit``. Counted in ``limits``, apart from errors.
        """
        counter = self._per_case.setdefault(result.case_id, [0, 0])
        if result.status == "not_run":
            self._counts["not_run"] += 1
            return
        passed = result.passed is True
        counter[0] += 1
        counter[1] += passed
        self._counts["n"] += 1
        self._counts["passed"] += passed
        self._counts["errors"] += result.status == "error"
        if result.status == "ok":
            self._finished += 1
            self._counts["grader_errors"] += result.grader_error is not None
            self._verdicts += result.grader_error is None and result.passed is not None
        self._durations_ms.append(result.duration_ms)
        if limit is None and result.trace is not None:
            limit = result.trace.limit
        if limit is not None and result.status == "ok":
            self._limits[limit] = self._limits.get(limit, 0) + 1
        for score in result.scores:
            self._metrics.setdefault(score.metric, _MetricTotals()).add(score)
            if score.metric == "localization":
                self._add_localization(score)
            call = score.detail.get("call") if score.grader == "judge" else None
            if isinstance(call, dict):
                self._add_judge_call(call)
        self._add_usage(result, usage)

    def _add_judge_call(self, call: dict[str, Any]) -> None:
        """Add a judge call's tokens and cost (its record: :class:`~benchbook.eval.judges.
        JudgeCall`) to the judge totals, kept apart from the harness's."""
        for i, key in ((2, "input_tokens"), (3, "output_tokens")):
            value = call.get(key)
            self._tokens[i] += value if isinstance(value, int) else 0
        cost = call.get("cost_usd")
        if isinstance(cost, int | float):
            self._judge_cost_usd += Decimal(repr(cost))

    def _add_localization(self, score: Score) -> None:
        """Keep what :func:`~benchbook.eval.localization.aggregate` reads of one score: the
        final levels, the trajectory's AUC and redundancy and EditLoc, or the error."""
        detail = score.detail or {}
        if score.status == "error" or detail.get("error") == "no_context_extracted":
            # upstream's error rows: counted, left out of micro/macro (issue 29)
            self._localization.append({"error": str(detail.get("error", "error"))})
            return
        if score.status != "ok" or not isinstance(detail.get("final"), dict):
            return
        trajectory = detail.get("trajectory")
        trajectory = trajectory if isinstance(trajectory, dict) else {}
        self._localization.append(
            {
                "final": detail["final"],
                "trajectory": {
                    "auc_coverage": trajectory.get("auc_coverage"),
                    "redundancy": trajectory.get("redundancy"),
                },
                "editloc": detail.get("editloc"),
            }
        )

    def _add_usage(self, result: CaseResult, usage: Usage | None) -> None:
        trace = result.trace
        if usage is None and trace is not None:
            usage = trace.usage
        if usage is not None:
            self._tokens[0] += usage.input_tokens
            self._tokens[1] += usage.output_tokens
        cost = result.cost_usd if result.cost_usd is not None else (trace and trace.cost_usd)
        if cost:
            self._cost_usd += Decimal(repr(cost))

    def _averaged(self, per_case: Callable[[int, int, int], float]) -> dict[str, float]:
        """``{str(k): mean over cases with ≥ k finished samples of per_case(n, c, k)}``."""
        out: dict[str, float] = {}
        for k in range(1, self.repeats + 1):
            values = [per_case(n, c, k) for n, c in self._per_case.values() if n >= k]
            if values:
                out[str(k)] = math.fsum(values) / len(values)
        return out

    def summary(self) -> dict[str, Any]:
        """The scorecard's summary fields, ready for ``Scorecard(**header, **summary)``.

        Returns:
            ``{cases, n, passed, errors, grader_errors, not_run, limits, pass_rate,
            pass_interval, pass_at_k, pass_hat_k, metrics, tokens_input, tokens_output,
            cost_usd, judge_tokens_input, judge_tokens_output, judge_cost_usd, latency}`` (see
            :class:`~benchbook.contracts.scorecard.Scorecard`); ``repeats`` is left to the caller.
        """
        n, passed = self._counts["n"], self._counts["passed"]
        rates = rated(n, self._finished, self._verdicts)
        durations = sorted(self._durations_ms)
        return {
            "cases": len(self._per_case),
            **self._counts,
            "limits": dict(sorted(self._limits.items())),
            "pass_rate": passed / n if rates else None,
            "pass_interval": wilson_interval(passed, n) if rates else None,
            "pass_at_k": self._averaged(pass_at_k) if rates else {},
            "pass_hat_k": self._averaged(pass_hat_k) if rates else {},
            "metrics": {name: m.summary() for name, m in sorted(self._metrics.items())},
            "localization": (
                localization_aggregate(self._localization) if self._localization else None
            ),
            "tokens_input": self._tokens[0],
            "tokens_output": self._tokens[1],
            "cost_usd": float(self._cost_usd),
            "judge_tokens_input": self._tokens[2],
            "judge_tokens_output": self._tokens[3],
            "judge_cost_usd": float(self._judge_cost_usd),
            "latency": LatencySummary(
                p50_ms=nearest_rank(durations, 50),
                p95_ms=nearest_rank(durations, 95),
                max_ms=float(durations[-1]) if durations else None,
            ),
        }

    def finish(self, **header: Any) -> Scorecard:
        """The full scorecard: the caller's header fields (``id, run_id, plan, plan_hash,
        dataset, dataset_content_hash, harness, created_at`` …) plus :meth:`summary` and
        ``repeats``."""
        return Scorecard(**{"repeats": self.repeats, **header, **self.summary()})


__all__ = [
    "Z_975",
    "ScorecardBuilder",
    "nearest_rank",
    "pass_at_k",
    "pass_hat_k",
    "wilson_interval",
]
