"""Scorecards that give no pass/fail, and comparisons with nothing to pair, never show a number
that looks measured (SPEC H.6–H.7, fail closed), on SQLite and PostgreSQL.

Found by a new user's trial (2026-12-06): a rescore with only measuring graders listed the
original run's passes (``passed: yes`` under ``--outcome passed``), its compare printed
``10.00% → 10.00%``, two measure-only scorecards passed the CI gate at ``0.00% → 0.00%``, two
runs of disjoint subsets were "comparable" with 0 pairs, and a skipped score exported as 0.0.
"""

from __future__ import annotations

from sqlalchemy import text

from benchbook.contracts.dataset import GraderSpec
from benchbook.eval.compare import gate
from benchbook.services import comparisons, run_exports, run_results, scorecards
from benchbook.services import datasets as ds
from benchbook.services.context import Context
from tests.eval.test_runs import arithmetic, python_harness, rctx, run_to_end

__all__ = ["rctx"]

MEASURE_ONLY = [GraderSpec(id="cost", config={"max_usd": 1})]  # no cost reported: skipped


def test_a_rescore_that_gives_no_verdict_lists_exports_and_compares_none(rctx: Context) -> None:
    ds.register_dataset(rctx, arithmetic(n=6))
    run = run_to_end(rctx, python_harness(rctx, "add_wrong_on_threes"))
    assert run.counts.passed == 4  # c0 and c3 answer wrong
    card = scorecards.rescore_run(rctx, run.id, MEASURE_ONLY)
    assert (card.passed, card.pass_rate) == (0, None)
    listed = run_results.list_run_results(rctx, run.id, scorecard=card.id)
    assert [r.passed for r in listed] == [None] * 6
    assert [s.status for r in listed for s in r.scores] == ["skipped"] * 6
    passing = run_results.list_run_results(rctx, run.id, outcome="passed", scorecard=card.id)
    assert passing == []
    assert run_results.get_run_result(rctx, run.id, "c1", 0, card.id).passed is None
    assert run_results.get_run_result(rctx, run.id, "c1").passed is True  # the run's own
    _, batches = run_exports.run_export_batches(rctx, run.id, card.id)
    rows = [row for batch in batches for row in batch]
    assert [(r["passed"], r["score.cost"]) for r in rows] == [(None, None)] * 6

    found = comparisons.compare_scorecards(rctx, run.scorecard_id, card.id)
    assert not found.comparable
    assert "the candidate scorecard has no pass/fail (its graders only measure)" in found.reasons
    assert (found.baseline_pass_rate, found.candidate_pass_rate) == (None, None)
    assert (found.pass_rate_delta, found.delta_interval, found.significant) == (None, None, False)
    assert gate(found, "regression").exit_code == 2
    pairs = comparisons.list_paired_results(rctx, found, ["c1"])
    base, cand = pairs["c1", 0]
    assert base is not None and cand is not None
    assert (base.passed, cand.passed) == (True, None)


def test_two_measure_only_runs_are_not_comparable_and_fail_the_gate(rctx: Context) -> None:
    ds.register_dataset(rctx, arithmetic(n=4))
    harness = python_harness(rctx, "add")
    first = run_to_end(rctx, harness, graders=MEASURE_ONLY)
    second = run_to_end(rctx, harness, graders=MEASURE_ONLY)
    found = comparisons.compare_scorecards(rctx, first.scorecard_id, second.scorecard_id)
    assert found.paired == 4 and not found.comparable
    assert found.reasons == [
        "the baseline scorecard has no pass/fail (its graders only measure)",
        "the candidate scorecard has no pass/fail (its graders only measure)",
    ]
    assert found.candidate_pass_rate is None
    verdict = gate(found, "regression")
    assert (verdict.exit_code, verdict.passed) == (2, False)


def test_runs_of_disjoint_subsets_pair_nothing_and_are_not_comparable(rctx: Context) -> None:
    ds.register_dataset(rctx, arithmetic(n=4))
    harness = python_harness(rctx, "add")
    first = run_to_end(rctx, harness, case_ids=["c0"])
    second = run_to_end(rctx, harness, case_ids=["c1"])
    found = comparisons.compare_scorecards(rctx, first.scorecard_id, second.scorecard_id)
    assert found.paired == 0 and not found.comparable
    assert found.reasons == ["no (case, sample) pair has a result on both sides"]
    assert (found.baseline_pass_rate, found.pass_rate_delta) == (None, None)
    assert gate(found, "regression").exit_code == 2


def test_the_migration_drops_only_the_vectors_of_other_scorecards(rctx: Context) -> None:
    """Vectors stored before 0019 for a rescore held the run's own verdicts where the rescore
    gave none: the migration deletes them (rebuilt at the next comparison), keeps the runs'."""
    from alembic import command

    from benchbook.store.engine import alembic_config

    ds.register_dataset(rctx, arithmetic(n=3))
    run = run_to_end(rctx, python_harness(rctx, "add"))
    card = scorecards.rescore_run(rctx, run.id, MEASURE_ONLY)
    comparisons.compare_scorecards(rctx, run.scorecard_id, card.id)  # stores both vectors
    stored = text("SELECT scorecard_id FROM verdict_vectors ORDER BY scorecard_id")
    with rctx.engine.connect() as conn:
        assert sorted(conn.execute(stored).scalars()) == sorted([run.scorecard_id, card.id])
    config = alembic_config(rctx.engine)
    command.downgrade(config, "0018_verdicts")
    command.upgrade(config, "head")
    with rctx.engine.connect() as conn:
        assert list(conn.execute(stored).scalars()) == [run.scorecard_id]


def test_a_scorecard_compared_with_itself_says_so(rctx: Context) -> None:
    """``benchbook compare --baseline baseline $RUN`` right after tagging ``$RUN`` baseline
    printed "passed" without a word that both sides were one scorecard."""
    ds.register_dataset(rctx, arithmetic(n=2))
    run = run_to_end(rctx, python_harness(rctx, "add"))
    scorecards.set_scorecard_tags(rctx, run.scorecard_id, ["baseline"])
    found = comparisons.compare_scorecards(rctx, "baseline", run.id)
    assert found.comparable and found.paired == 2
    assert found.notes == [
        f"the baseline and the candidate are the same scorecard ({run.scorecard_id}): nothing"
        " can differ; compare another run against it"
    ]


def test_an_answer_holding_nul_is_a_case_error_on_both_backends(rctx: Context) -> None:
    """On PostgreSQL a harness answering a NUL byte (a binary on stdout) failed the whole run
    with ``psycopg.DataError``; SQLite stored it. Now the case is an error naming the cause,
    and the run finishes, on both."""
    ds.register_dataset(rctx, arithmetic(n=2))
    run = run_to_end(rctx, python_harness(rctx, "nul_answer"))
    assert (run.status, run.counts.done, run.counts.error) == ("failed", 2, 2)
    [result, _] = run_results.list_run_results(rctx, run.id)
    assert result.error is not None and result.answer == ""
    assert result.error.startswith("the answer holds a NUL character (U+0000) at character 2")
