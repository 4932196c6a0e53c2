"""Paired comparison of two scorecards (SPEC H.7) and the CI gate on it.

:func:`compare_outcomes` matches the (case, sample) outcomes of a baseline and a candidate by
key, assigns each pair a transition and computes, over the pairs present on both sides:

- the pass-rate delta (candidate − baseline) with a **paired bootstrap** 95% percentile interval
  (Efron 1979, "Bootstrap methods: another look at the jackknife"; Efron & Tibshirani 1993,
  *An Introduction to the Bootstrap*, ch. 13) — cases are the resampling unit, so the samples
  of one case stay together;
- **McNemar's exact test** (McNemar 1947, "Note on the sampling error of the difference between
  correlated proportions"): under H0 the discordant pairs split Binomial(fixed + regressed, ½);
  the two-sided p-value is ``scipy.stats.binomtest(fixed, fixed + regressed, 0.5).pvalue``
  (equal to statsmodels' ``mcnemar(table, exact=True).pvalue``).

The bootstrap draws what ``scipy.stats.bootstrap((baseline, candidate), mean difference,
paired=True, method="percentile")`` draws, without materializing the resamples: a resample of
n cases drawn with replacement counts each distinct per-case value ``(Σ candidate − Σ baseline
passes, paired samples)`` a Multinomial(n, frequencies) number of times, and the resample's
statistic depends on those counts only. So 10,000 resamples of 100k cases cost one multinomial
draw of shape (10,000, distinct values) — milliseconds — where the index-based scipy call draws
10⁹ indices (~40 s here). ``tests/eval/test_compare.py`` checks the intervals agree with
scipy's. numpy and scipy are imported where they are used, so CLI start-up does not pay.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from benchbook.contracts.comparison import (
    BootstrapInterval,
    CaseTransition,
    Comparison,
    Delta,
    FailOn,
    GateResult,
    McNemarTest,
    Outcome,
    Transition,
    TransitionCounts,
)
from benchbook.contracts.scorecard import Scorecard

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 0
ALPHA = 0.05
MAX_LISTED = 200
"""Regressed ids listed in one gate failure line (the rest are counted)."""

Key = tuple[str, int]


def transition(baseline: Outcome | None, candidate: Outcome | None) -> Transition:
    """The transition of one pair; ``None`` means the side has no result for it.

    Raises:
        ValueError: both sides are None.
    """
    if baseline is None and candidate is None:
        raise ValueError("a pair needs a result on at least one side")
    if candidate is None:
        return "missing_in_candidate"
    if baseline is None:
        return "new_in_candidate"
    before, after = baseline == "passed", candidate == "passed"
    if before and after:
        return "still_passing"
    if after:
        return "fixed"
    return "regressed" if before else "still_failing"


def mcnemar_exact_p(fixed: int, regressed: int) -> float:
    """Two-sided exact McNemar p-value of the discordant counts (1.0 when both are 0).

    Source: McNemar 1947; the exact form is the two-sided binomial test of ``fixed`` successes
    in ``fixed + regressed`` trials at p = ½ (``scipy.stats.binomtest``).

    Raises:
        ValueError: a negative count.
    """
    if fixed < 0 or regressed < 0:
        raise ValueError(f"counts must be >= 0, got fixed={fixed}, regressed={regressed}")
    if fixed + regressed == 0:
        return 1.0
    from scipy.stats import binomtest

    return float(binomtest(fixed, fixed + regressed, 0.5).pvalue)


def paired_bootstrap(
    per_case: Iterable[tuple[int, int]],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
) -> BootstrapInterval | None:
    """Percentile interval of Σ diff / Σ pairs over cases resampled with replacement.

    Args:
        per_case: one ``(diff, pairs)`` per case: ``diff`` = candidate passes − baseline passes
            over the case's ``pairs`` (≥ 1) paired samples.
        resamples: number of bootstrap resamples (≥ 1).
        seed: seed of ``numpy.random.default_rng``; the same seed gives the same interval.
        level: two-sided confidence level in (0, 1).

    Returns:
        The interval, or None when there is no case.

    Raises:
        ValueError: ``resamples`` < 1, ``level`` outside (0, 1) or a case with pairs < 1.
    """
    if resamples < 1 or not 0 < level < 1:
        raise ValueError(f"need resamples >= 1 and 0 < level < 1 (got {resamples}, {level})")
    tally: dict[tuple[int, int], int] = {}
    for value in per_case:
        if value[1] < 1:
            raise ValueError(f"a case needs at least one paired sample, got {value}")
        tally[value] = tally.get(value, 0) + 1
    if not tally:
        return None
    import numpy as np

    values = np.array(list(tally), dtype=np.float64)
    counts = np.array(list(tally.values()), dtype=np.float64)
    n = int(counts.sum())
    drawn = np.random.default_rng(seed).multinomial(n, counts / n, size=resamples)
    estimates = (drawn @ values[:, 0]) / (drawn @ values[:, 1])
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(estimates, [tail, 100 - tail])
    return BootstrapInterval(
        low=float(low), high=float(high), level=level, resamples=resamples, seed=seed
    )


_OUTCOMES: tuple[Outcome | None, ...] = ("passed", "failed", "error", None)
_TRANSITION_OF = {
    (b, c): transition(b, c) for b in _OUTCOMES for c in _OUTCOMES if (b, c) != (None, None)
}


@dataclass
class _Pairing:
    cases: list[CaseTransition] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    duplicates: list[str] = field(default_factory=list)
    per_case: dict[str, list[int]] = field(default_factory=dict)  # case → [diff, pairs]
    passed: list[int] = field(default_factory=lambda: [0, 0])  # paired passes per side


def _index(
    side: Iterable[tuple[str, int, Outcome | None]], duplicates: list[str]
) -> dict[Key, Outcome | None]:
    out: dict[Key, Outcome | None] = {}
    for case_id, sample, outcome in side:
        key = (case_id, sample)
        if key in out:
            duplicates.append(f"{case_id}#{sample}")
        out[key] = outcome
    return out


def _pair(
    baseline: Iterable[tuple[str, int, Outcome | None]],
    candidate: Iterable[tuple[str, int, Outcome | None]],
) -> _Pairing:
    p = _Pairing()
    before = _index(baseline, p.duplicates)
    after = _index(candidate, p.duplicates)
    keys = list(before) + [k for k in after if k not in before]
    counts, per_case = p.counts, p.per_case
    for key in keys:
        b, c = before.get(key), after.get(key)
        if b is None and c is None:
            continue  # not_run on both sides: nothing to say
        t = _TRANSITION_OF[b, c]
        p.cases.append(CaseTransition(key[0], key[1], t, b, c))
        counts[t] = counts.get(t, 0) + 1
        if b is not None and c is not None:
            cell = per_case.get(key[0])
            if cell is None:
                cell = per_case[key[0]] = [0, 0]
            bp, cp = b == "passed", c == "passed"
            cell[0] += cp - bp
            cell[1] += 1
            p.passed[0] += bp
            p.passed[1] += cp
    return p


def _delta(baseline: float | None, candidate: float | None) -> Delta:
    delta = None if baseline is None or candidate is None else candidate - baseline
    return Delta(baseline=baseline, candidate=candidate, delta=delta)


def _summary_deltas(base: Scorecard, cand: Scorecard) -> dict[str, Any]:
    shared = sorted(set(base.metrics) & set(cand.metrics))
    return {
        "metrics": {m: _delta(base.metrics[m].mean, cand.metrics[m].mean) for m in shared},
        "cost_usd": _delta(base.cost_usd, cand.cost_usd),
        "tokens_input": _delta(base.tokens_input, cand.tokens_input),
        "tokens_output": _delta(base.tokens_output, cand.tokens_output),
        "latency_p50_ms": _delta(base.latency.p50_ms, cand.latency.p50_ms),
        "latency_p95_ms": _delta(base.latency.p95_ms, cand.latency.p95_ms),
        "errors": _delta(base.errors, cand.errors),
    }


def comparability(base: Scorecard, cand: Scorecard) -> list[str]:
    """Why two scorecards are not comparable (empty when they are): different dataset content
    hashes or different plan (grader) hashes."""
    reasons = []
    if base.dataset_content_hash != cand.dataset_content_hash:
        reasons.append("dataset content hash differs")
    if base.plan_hash != cand.plan_hash:
        reasons.append("grader hash differs")
    return reasons


def compare_outcomes(
    base: Scorecard,
    cand: Scorecard,
    baseline: Iterable[tuple[str, int, Outcome | None]],
    candidate: Iterable[tuple[str, int, Outcome | None]],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Comparison:
    """Compare two scorecards given their summaries and per-pair outcomes (SPEC H.7).

    Args:
        base, cand: the baseline and candidate scorecard summaries.
        baseline, candidate: ``(case_id, sample, outcome)`` per pair, in dataset order;
            ``outcome`` None for a ``not_run`` pair (treated as absent).
        resamples, seed: of the paired bootstrap (see :func:`paired_bootstrap`).

    Returns:
        The comparison, ``comparable`` False (with reasons) when hashes differ.

    Raises:
        ValueError: ``resamples`` < 1.
    """
    p = _pair(baseline, candidate)
    fixed, regressed = p.counts.get("fixed", 0), p.counts.get("regressed", 0)
    paired = sum(cell[1] for cell in p.per_case.values())
    interval = paired_bootstrap(((d, n) for d, n in p.per_case.values()), resamples, seed)
    p_value = mcnemar_exact_p(fixed, regressed)
    reasons = comparability(base, cand)
    # model_construct: every value is built above with its field's type; validating 100k
    # case tuples again would add ~0.3 s to a 100k-pair comparison
    return Comparison.model_construct(
        baseline=base.id,
        candidate=cand.id,
        baseline_run=base.run_id,
        candidate_run=cand.run_id,
        baseline_dataset=base.dataset,
        candidate_dataset=cand.dataset,
        baseline_harness=base.harness,
        candidate_harness=cand.harness,
        comparable=not reasons,
        reasons=reasons,
        counts=TransitionCounts(**p.counts),
        paired=paired,
        baseline_pass_rate=p.passed[0] / paired if paired else None,
        candidate_pass_rate=p.passed[1] / paired if paired else None,
        pass_rate_delta=(p.passed[1] - p.passed[0]) / paired if paired else None,
        delta_interval=interval,
        mcnemar=McNemarTest(fixed=fixed, regressed=regressed, p_value=p_value),
        alpha=ALPHA,
        significant=p_value < ALPHA,
        duplicates=p.duplicates,
        cases=p.cases,
        **_summary_deltas(base, cand),
    )


def _ids(comparison: Comparison, wanted: Transition) -> str:
    ids = [f"{c.case_id}#{c.sample}" for c in comparison.cases if c.transition == wanted]
    shown = ", ".join(ids[:MAX_LISTED])
    return shown + (f" … and {len(ids) - MAX_LISTED} more" if len(ids) > MAX_LISTED else "")


def gate(comparison: Comparison, fail_on: FailOn, allow_errors: bool = False) -> GateResult:
    """The CI gate (SPEC H.7): exit 2 when not comparable; else 1 when ``fail_on`` trips
    (``regression``: any regressed pair; ``significant-drop``: the delta is negative and McNemar
    p < α), when pairs are missing in the candidate, when a key came twice, or — unless
    ``allow_errors`` — when the candidate has errored pairs; else 0."""
    failures: list[str] = []
    if not comparison.comparable:
        failures = [f"not comparable: {reason}" for reason in comparison.reasons]
        return GateResult(
            fail_on=fail_on, allow_errors=allow_errors, exit_code=2, passed=False, failures=failures
        )
    counts = comparison.counts
    if fail_on == "regression" and counts.regressed:
        failures.append(f"{counts.regressed} regressed: {_ids(comparison, 'regressed')}")
    delta = comparison.pass_rate_delta
    if fail_on == "significant-drop" and comparison.significant and delta is not None and delta < 0:
        p_value = comparison.mcnemar.p_value
        failures.append(
            f"significant drop: pass rate {delta:+.2%}, McNemar p = {p_value:.3g}"
            f" < {comparison.alpha}"
        )
    if counts.missing_in_candidate:
        missing = _ids(comparison, "missing_in_candidate")
        failures.append(f"{counts.missing_in_candidate} missing in candidate: {missing}")
    if comparison.duplicates:
        failures.append(f"duplicate case ids: {', '.join(comparison.duplicates[:MAX_LISTED])}")
    errored = [c for c in comparison.cases if c.candidate == "error"]
    if errored and not allow_errors:
        shown = ", ".join(f"{c.case_id}#{c.sample}" for c in errored[:MAX_LISTED])
        failures.append(f"{len(errored)} errored in candidate (--allow-errors to accept): {shown}")
    code = 1 if failures else 0
    return GateResult(
        fail_on=fail_on,
        allow_errors=allow_errors,
        exit_code=code,
        passed=not failures,
        failures=failures,
    )
