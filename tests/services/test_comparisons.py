"""compare_scorecards and scorecard tags through the services (SPEC H.7, issue 11 items 1 and
3), on SQLite and PostgreSQL, with the deterministic python harnesses of tests/eval."""

from __future__ import annotations

import pytest

from benchbook.contracts.dataset import GraderSpec
from benchbook.errors import Conflict, Forbidden, InvalidInput, NotFound
from benchbook.eval.compare import gate
from benchbook.services import datasets as ds
from benchbook.services import harnesses, run_execution, runs, scorecards
from benchbook.services.comparisons import compare_scorecards
from benchbook.services.context import Context
from tests.eval.test_runs import arithmetic, python_harness, rctx, run_to_end, start
from tests.services.test_accounts import make_team

__all__ = ["rctx"]  # the fixture, imported for these tests


def two_runs(ctx: Context) -> tuple[str, str]:
    """Baseline ``explode`` (c1 and c11 error) and candidate ``add`` (all right) on sums@1.0.0."""
    ds.register_dataset(ctx, arithmetic())
    base = run_to_end(ctx, python_harness(ctx, "explode"))
    cand = run_to_end(ctx, python_harness(ctx, "add"))
    return base.scorecard_id, cand.scorecard_id


def test_transitions_follow_the_two_runs_case_by_case(rctx: Context) -> None:
    base, cand = two_runs(rctx)
    result = compare_scorecards(rctx, base, cand)
    assert result.comparable and result.reasons == []
    changed = {(c.case_id, c.transition) for c in result.cases if c.transition != "still_passing"}
    assert changed == {("c1", "fixed"), ("c11", "fixed")}
    assert result.counts.still_passing == 10 and result.paired == 12
    assert result.errors.baseline == 2 and result.errors.candidate == 0
    assert result.pass_rate_delta == pytest.approx(2 / 12)
    back = compare_scorecards(rctx, cand, base)
    assert [c.case_id for c in back.cases if c.transition == "regressed"] == ["c1", "c11"]
    assert [c.candidate for c in back.cases if c.transition == "regressed"] == ["error", "error"]
    verdict = gate(back, "regression")
    assert verdict.exit_code == 1 and verdict.failures[0] == "2 regressed: c1#0, c11#0"


def test_a_comparison_is_reused_only_while_both_runs_stay_ended(rctx: Context) -> None:
    base, cand = two_runs(rctx)
    first = compare_scorecards(rctx, base, cand)
    assert compare_scorecards(rctx, base, cand) is first  # both ended: computed once
    assert compare_scorecards(rctx, base, cand, seed=1) is not first
    run_id = scorecards.get_scorecard(rctx, base).run_id
    runs.retry_run(rctx, run_id)  # queued again: its errored results are gone until it runs
    queued = compare_scorecards(rctx, base, cand)
    assert (queued.counts.new_in_candidate, queued.counts.fixed) == (2, 0)
    assert compare_scorecards(rctx, base, cand) is not queued  # not ended: never reused
    run_execution.execute_run(rctx, run_id)
    again = compare_scorecards(rctx, base, cand)
    assert again is not first and (again.counts.new_in_candidate, again.counts.fixed) == (0, 2)


def test_run_ids_stand_for_their_own_scorecards(rctx: Context) -> None:
    base, cand = two_runs(rctx)
    base_run = scorecards.get_scorecard(rctx, base).run_id
    cand_run = scorecards.get_scorecard(rctx, cand).run_id
    by_run = compare_scorecards(rctx, base_run, cand_run)
    assert (by_run.baseline, by_run.candidate) == (base, cand)


def test_a_rescore_under_another_grader_is_not_comparable_but_still_compared(
    rctx: Context,
) -> None:
    base, cand = two_runs(rctx)
    run_id = scorecards.get_scorecard(rctx, cand).run_id
    other = scorecards.rescore_run(rctx, run_id, [GraderSpec(id="regex", config={"pattern": "7"})])
    result = compare_scorecards(rctx, base, other.id)
    assert not result.comparable and result.reasons == ["grader hash differs"]
    assert result.counts.regressed > 0  # "7" matches only a few answers
    assert gate(result, "regression").exit_code == 2


def test_a_tag_names_one_scorecard_per_dataset_and_compare_resolves_it(rctx: Context) -> None:
    base, cand = two_runs(rctx)
    tagged = scorecards.set_scorecard_tags(rctx, base, ["baseline", " prod ", "baseline"])
    assert tagged.tags == ["baseline", "prod"]
    assert compare_scorecards(rctx, "baseline", cand).baseline == base
    moved = scorecards.set_scorecard_tags(rctx, cand, ["baseline"])
    assert moved.tags == ["baseline"]
    assert scorecards.get_scorecard(rctx, base).tags == ["prod"]
    assert compare_scorecards(rctx, "baseline", cand).baseline == cand
    assert scorecards.set_scorecard_tags(rctx, cand, []).tags == []
    with pytest.raises(NotFound, match="no scorecard of dataset 'sums' is tagged 'baseline'"):
        compare_scorecards(rctx, "baseline", cand)


@pytest.mark.parametrize("bad", ["latest", "1.0.0", "sc_1234", "run_x", "", "x" * 61])
def test_bad_scorecard_tags_are_refused_and_nothing_changes(rctx: Context, bad: str) -> None:
    base, _ = two_runs(rctx)
    scorecards.set_scorecard_tags(rctx, base, ["prod"])
    with pytest.raises(InvalidInput):
        scorecards.set_scorecard_tags(rctx, base, ["baseline", bad])
    assert scorecards.get_scorecard(rctx, base).tags == ["prod"]


def test_only_a_finished_runs_scorecard_can_be_tagged(rctx: Context) -> None:
    ds.register_dataset(rctx, arithmetic())
    run = start(rctx, python_harness(rctx, "add"))
    cancelled = runs.cancel_run(rctx, run.id)
    assert cancelled.status == "cancelled" and cancelled.scorecard_id is not None
    with pytest.raises(Conflict, match="is cancelled; only a finished run's scorecard"):
        scorecards.set_scorecard_tags(rctx, cancelled.scorecard_id, ["baseline"])
    assert scorecards.get_scorecard(rctx, cancelled.scorecard_id).tags == []


def test_bad_comparisons_are_clear_errors(rctx: Context) -> None:
    base, cand = two_runs(rctx)
    ds.register_dataset(rctx, arithmetic("other-sums"))
    elsewhere = run_to_end(rctx, "add@1.0.0", dataset="other-sums")
    with pytest.raises(InvalidInput, match="compare scorecards of the same dataset"):
        compare_scorecards(rctx, base, elsewhere.scorecard_id)
    with pytest.raises(NotFound, match=r"^scorecard 'sc_0000000000000000' not found$"):
        compare_scorecards(rctx, base, "sc_0000000000000000")
    scorecards.set_scorecard_tags(rctx, base, ["baseline"])
    only_base = r"\(the candidate must be a scorecard or run id; only the baseline may be a tag\)$"
    with pytest.raises(NotFound, match=f"^scorecard 'baseline' not found {only_base}"):
        compare_scorecards(rctx, cand, "baseline")
    with pytest.raises(NotFound, match="run 'run_0000000000000000' not found"):
        compare_scorecards(rctx, "run_0000000000000000", cand)
    with pytest.raises(InvalidInput, match="resamples"):
        compare_scorecards(rctx, base, cand, resamples=0)
    with pytest.raises(InvalidInput, match="seed"):
        compare_scorecards(rctx, base, cand, seed=-1)


def test_viewers_compare_members_tag_and_other_workspaces_see_nothing(ctx: Context) -> None:
    team = make_team(ctx)
    ds.register_dataset(team.admin, arithmetic())
    harnesses.register_harness(ctx, harnesses.parse_harness(agent("add")), shared=True)
    harnesses.register_harness(ctx, harnesses.parse_harness(agent("explode")), shared=True)
    base = run_to_end(team.member, "explode@1.0.0").scorecard_id
    cand = run_to_end(team.member, "add@1.0.0").scorecard_id
    assert compare_scorecards(team.viewer, base, cand).counts.fixed == 2
    with pytest.raises(Forbidden):
        scorecards.set_scorecard_tags(team.viewer, base, ["baseline"])
    assert scorecards.set_scorecard_tags(team.member, base, ["baseline"]).tags == ["baseline"]
    with pytest.raises(NotFound):
        compare_scorecards(team.outsider, base, cand)
    with pytest.raises(NotFound):
        scorecards.set_scorecard_tags(team.outsider, base, ["prod"])
    with pytest.raises(NotFound):  # the tag is the team's: the outsider's workspace has none
        compare_scorecards(team.outsider, "baseline", cand)
    assert scorecards.get_scorecard(team.viewer, base).tags == ["baseline"]


def agent(function: str) -> dict[str, object]:
    return {
        "id": function,
        "version": "1.0.0",
        "kind": "python",
        "config": {"callable": f"tests.eval.harnesses.agents:{function}"},
    }
