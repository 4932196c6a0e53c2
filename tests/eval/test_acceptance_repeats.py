"""Acceptance (issue 10, SPEC H.6): repeats k=5 at run level give hand-computed pass@k and
pass^k, on SQLite and PostgreSQL.

Case ``c<i>`` (i = 0..5) is answered right on sample ``s`` exactly when ``(i + s) % 5 < i``; as
``s`` runs over 0..4, ``(i + s) % 5`` takes every value 0..4 once, so case ``c<i>`` has
``c = min(i, 5)`` passing samples out of ``n = 5``: 0, 1, 2, 3, 4 and 5.
"""

from __future__ import annotations

from fractions import Fraction

from benchbook.contracts.run import CaseInput
from benchbook.services import datasets as ds
from benchbook.services import harnesses, scorecards
from benchbook.services.context import Context
from tests.eval.test_runs import arithmetic, rctx, run_to_end  # noqa: F401 (fixture)

K = 5


def right_on_a_pattern(case: CaseInput) -> str:
    """``i+1`` for ``What is i+1?`` on the samples where ``(i + sample) % 5 < i``, else ``i``."""
    i = int(case.case_id[1:])
    return str(i + 1 if (i + case.sample) % K < i else i)


def test_repeats_give_pass_at_k_and_pass_hat_k_equal_to_the_hand_computed_values(
    rctx: Context,  # noqa: F811
) -> None:
    ds.register_dataset(rctx, arithmetic(n=6))
    callable_path = f"{__name__}:right_on_a_pattern"
    body = {"id": "pattern", "version": "1.0.0", "kind": "python"}
    harnesses.register_harness(
        rctx, harnesses.parse_harness({**body, "config": {"callable": callable_path}})
    )
    run = run_to_end(rctx, "pattern@1.0.0", repeats=K, concurrency=4)
    assert (run.status, run.counts.done, run.counts.passed) == ("finished", 30, 15)

    assert run.scorecard_id is not None
    card = scorecards.get_scorecard(rctx, run.scorecard_id)
    # c = 0, 1, 2, 3, 4, 5 passing samples of n = 5 for the six cases.
    # pass@1 = mean(c / n) = (0 + 1 + 2 + 3 + 4 + 5) / 5 / 6
    pass_at_1 = Fraction(0 + 1 + 2 + 3 + 4 + 5, 5) / 6
    # pass@5 = mean(1 - C(n-c, 5) / C(5, 5)): 1 for every case with c >= 1, 0 for c = 0
    pass_at_5 = Fraction(0 + 1 + 1 + 1 + 1 + 1, 6)
    # pass@2 = mean(1 - C(5-c, 2) / C(5, 2)), C(5, 2) = 10: C(5-c, 2) = 10, 6, 3, 1, 0, 0
    pass_at_2 = sum(1 - Fraction(m, 10) for m in (10, 6, 3, 1, 0, 0)) / 6
    # pass^5 = mean(C(c, 5) / C(5, 5)): only the case with c = 5
    pass_hat_5 = Fraction(0 + 0 + 0 + 0 + 0 + 1, 6)
    # pass^2 = mean(C(c, 2) / C(5, 2)): C(c, 2) = 0, 0, 1, 3, 6, 10
    pass_hat_2 = Fraction(0 + 0 + 1 + 3 + 6 + 10, 10) / 6
    assert (pass_at_1, pass_at_2, pass_at_5) == (Fraction(1, 2), Fraction(2, 3), Fraction(5, 6))
    assert (pass_hat_2, pass_hat_5) == (Fraction(1, 3), Fraction(1, 6))

    assert sorted(card.pass_at_k) == sorted(card.pass_hat_k) == ["1", "2", "3", "4", "5"]
    assert abs(card.pass_at_k["1"] - pass_at_1) < 1e-12
    assert abs(card.pass_at_k["2"] - pass_at_2) < 1e-12
    assert abs(card.pass_at_k["5"] - pass_at_5) < 1e-12
    assert abs(card.pass_hat_k["1"] - pass_at_1) < 1e-12
    assert abs(card.pass_hat_k["2"] - pass_hat_2) < 1e-12
    assert abs(card.pass_hat_k["5"] - pass_hat_5) < 1e-12
    assert (card.n, card.passed, card.cases, card.repeats) == (30, 15, 6, K)
    assert card.pass_rate == 0.5
