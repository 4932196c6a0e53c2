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
scipy's. numpy is imported where it is used, so CLI start-up does not pay; the McNemar p-value
needs no scipy (:func:`mcnemar_exact_p`).
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from math import comb
from typing import Any

from benchbook.contracts.comparison import (
    TRANSITIONS,
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


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for a block that allocates many small acyclic
    objects (a comparison builds ~3 tuples per pair). In a process with a large heap a full
    collection triggered by those allocations rescans it: 100k pairs took 1.5 s instead of
    0.8 s in the benchmark's process."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


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
    n, low = fixed + regressed, min(fixed, regressed)
    if n == 0 or 2 * low == n:
        return 1.0
    return min(1.0, 2.0 * _binomial_half_cdf(low, n))


def _binomial_half_cdf(m: int, n: int) -> float:
    """P(X ≤ m) for X ~ Binomial(n, ½) and m < n/2, without scipy (whose import cost a fresh
    server's first comparison 2-6 s): the term C(n, m)/2ⁿ exactly rounded (integer division),
    then the terms below it by the ratio C(n, i−1)/C(n, i) = i/(n−i+1) until they no longer
    change the sum (relative error ≲ 1e-13 for n in the hundreds of thousands)."""
    term = comb(n, m) / (1 << n)
    total, i = term, m
    while i > 0 and term > total * 1e-18:
        term *= i / (n - i + 1)
        total += term
        i -= 1
    return total


def paired_bootstrap(
    tally: Mapping[tuple[int, int], int],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
) -> BootstrapInterval | None:
    """Percentile interval of Σ diff / Σ pairs over cases resampled with replacement.

    Args:
        tally: ``{(diff, pairs): cases}`` — how many cases have ``diff`` = candidate passes −
            baseline passes over their ``pairs`` (≥ 1) paired samples. Single-sample cases are
            ``(1, 1)`` fixed, ``(-1, 1)`` regressed, ``(0, 1)`` unchanged.
        resamples: number of bootstrap resamples (≥ 1).
        seed: seed of ``numpy.random.default_rng``; the same seed and tally give the same
            interval (values are drawn in sorted order, whatever the tally's order).
        level: two-sided confidence level in (0, 1).

    Returns:
        The interval, or None when there is no case.

    Raises:
        ValueError: ``resamples`` < 1, ``level`` outside (0, 1), pairs < 1 or a negative count.
    """
    if resamples < 1 or not 0 < level < 1:
        raise ValueError(f"need resamples >= 1 and 0 < level < 1 (got {resamples}, {level})")
    kept = sorted((value, n) for value, n in tally.items() if n)
    if any(value[1] < 1 or n < 0 for value, n in kept):
        raise ValueError(f"every case needs >= 1 paired sample and a count >= 0: {kept[:5]}")
    if not kept:
        return None
    import numpy as np

    values = np.array([value for value, _ in kept], dtype=np.float64)
    counts = np.array([n for _, n in kept], dtype=np.float64)
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
_DIFF = {"fixed": 1, "regressed": -1, "still_passing": 0, "still_failing": 0}
"""Candidate passes − baseline passes of one paired (case, sample) by its transition."""


@dataclass
class Pairing:
    """Every pair's transition and the counts (what the statistics need)."""

    cases: list[CaseTransition] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TRANSITIONS, 0))
    duplicates: list[str] = field(default_factory=list)
    repeats: bool = False  # some key has a sample other than 0


def _index(
    side: Iterable[tuple[str, int, Outcome | None]], p: Pairing
) -> dict[Key, Outcome | None]:
    out: dict[Key, Outcome | None] = {}
    for case_id, sample, outcome in side:
        key = (case_id, sample)
        if key in out:
            p.duplicates.append(f"{case_id}#{sample}")
        if sample:
            p.repeats = True
        out[key] = outcome
    return out


def pair_outcomes(
    baseline: Iterable[tuple[str, int, Outcome | None]],
    candidate: Iterable[tuple[str, int, Outcome | None]],
) -> Pairing:
    """Every pair's transition, in baseline order then the candidate's new keys (the hot loop
    of a 100k-pair comparison: a dict lookup and one tuple per pair)."""
    if isinstance(baseline, list | tuple) and isinstance(candidate, list | tuple):
        aligned = _pair_aligned(baseline, candidate)
        if aligned is not None:
            return aligned
    p = Pairing()
    before, after = _index(baseline, p), _index(candidate, p)
    keys = list(before) + [k for k in after if k not in before]
    # tuple.__new__ skips the named tuple's Python-level constructor (~0.5 µs a pair)
    new, kind, counts, table, append = (
        tuple.__new__,
        CaseTransition,
        p.counts,
        _TRANSITION_OF,
        p.cases.append,
    )
    for key in keys:
        b, c = before.get(key), after.get(key)
        if b is None and c is None:
            continue  # not_run on both sides: nothing to say
        t = table[b, c]
        append(new(kind, (key[0], key[1], t, b, c)))
        counts[t] += 1
    return p


def _pair_aligned(
    baseline: Sequence[tuple[str, int, Outcome | None]],
    candidate: Sequence[tuple[str, int, Outcome | None]],
) -> Pairing | None:
    """:func:`pair_outcomes` of two sides holding the same keys in the same order (two runs of
    one dataset version, every case run: the usual comparison), zipped without a dict per side;
    None when the keys differ anywhere or repeat (then the general pairing runs)."""
    if len(baseline) != len(candidate):
        return None
    p = Pairing()
    new, kind, table, append = tuple.__new__, CaseTransition, _TRANSITION_OF, p.cases.append
    for (case_id, sample, b), (other, other_sample, c) in zip(baseline, candidate, strict=True):
        if case_id != other or sample != other_sample:
            return None
        if sample:
            p.repeats = True
        if b is None and c is None:
            continue  # not_run on both sides: nothing to say
        append(new(kind, (case_id, sample, table[b, c], b, c)))
    keys = {(c[0], c[1]) for c in baseline} if p.repeats else {c[0] for c in baseline}
    if len(keys) != len(baseline):
        return None  # a key repeats: the general pairing lists it
    for t, n in Counter(case.transition for case in p.cases).items():
        p.counts[t] = n
    return p


def _tally(p: Pairing) -> dict[tuple[int, int], int]:
    """``{(diff, pairs): cases}`` for the bootstrap; from the counts alone without repeats."""
    if not p.repeats:
        c = p.counts
        return {(1, 1): c["fixed"], (-1, 1): c["regressed"],
                (0, 1): c["still_passing"] + c["still_failing"]}  # fmt: skip
    per_case: dict[str, list[int]] = {}
    for case in p.cases:
        diff = _DIFF.get(case.transition)
        if diff is not None:
            cell = per_case.setdefault(case.case_id, [0, 0])
            cell[0] += diff
            cell[1] += 1
    tally: dict[tuple[int, int], int] = {}
    for d, n in per_case.values():
        tally[d, n] = tally.get((d, n), 0) + 1
    return tally


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


def _measures_only(card: Scorecard) -> bool:
    """Pairs ran but no grader gave a pass/fail: the scorecard has no pass rate."""
    return bool(card.n) and card.pass_rate is None


def comparability(base: Scorecard, cand: Scorecard, paired: int | None = None) -> list[str]:
    """Why two scorecards are not comparable (empty when they are): different dataset content
    hashes or different plan (grader) hashes; a side whose graders gave no pass/fail at all
    (only measurements: its pass rate is None though pairs ran); no pair on both sides
    (``paired`` 0: the two ran disjoint subsets, or nothing ran)."""
    reasons = []
    if base.dataset_content_hash != cand.dataset_content_hash:
        reasons.append("dataset content hash differs")
    if base.plan_hash != cand.plan_hash:
        reasons.append("grader hash differs")
    for side, card in (("baseline", base), ("candidate", cand)):
        if _measures_only(card):
            reasons.append(f"the {side} scorecard has no pass/fail (its graders only measure)")
    if paired == 0:
        reasons.append("no (case, sample) pair has a result on both sides")
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
    with gc_paused():
        p = pair_outcomes(baseline, candidate)
    return comparison_of(base, cand, p, resamples, seed)


def comparison_of(
    base: Scorecard, cand: Scorecard, p: Pairing, resamples: int, seed: int
) -> Comparison:
    """The comparison of the pairs ``p`` (:func:`compare_outcomes` after the pairing; also
    the end of :func:`benchbook.eval.verdicts.compare_verdicts`)."""
    counts = p.counts
    fixed, regressed, kept = counts["fixed"], counts["regressed"], counts["still_passing"]
    paired = fixed + regressed + kept + counts["still_failing"]
    passed = (regressed + kept, fixed + kept)  # paired passes: baseline, candidate
    # A side without any pass/fail has no pass rate to pair: its pairs read "failed", and a
    # 0% (or a delta against it) would look like a measured number.
    rated = paired > 0 and not _measures_only(base) and not _measures_only(cand)
    interval = paired_bootstrap(_tally(p), resamples, seed) if rated else None
    p_value = mcnemar_exact_p(fixed, regressed)
    reasons = comparability(base, cand, paired)
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
        counts=TransitionCounts(**counts),
        paired=paired,
        baseline_pass_rate=passed[0] / paired if rated else None,
        candidate_pass_rate=passed[1] / paired if rated else None,
        pass_rate_delta=(fixed - regressed) / paired if rated else None,
        delta_interval=interval,
        mcnemar=McNemarTest(fixed=fixed, regressed=regressed, p_value=p_value),
        alpha=ALPHA,
        significant=rated and p_value < ALPHA,
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
