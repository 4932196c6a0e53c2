"""Reading runs for the dashboard (SPEC G, H.4): runs filtered and keyset-paged, a run's results
filtered by outcome (against a baseline too) and searched by case id, one result with its trace,
and per-dataset run summaries — on SQLite and PostgreSQL.
"""

from __future__ import annotations

import pytest

from benchbook.contracts.dataset import GraderSpec
from benchbook.contracts.run import StartRunRequest
from benchbook.errors import InvalidInput, NotFound
from benchbook.services import datasets as ds
from benchbook.services import harnesses, run_results, runs, scorecards
from benchbook.services.context import Context
from tests.eval.test_runs import arithmetic, python_harness, run_to_end
from tests.services.test_accounts import make_team


def _ids(results: list) -> list[str]:  # type: ignore[type-arg]
    return [r.case_id for r in results]


def test_runs_filter_by_dataset_version_harness_and_status_and_page_by_keyset(
    ctx: Context,
) -> None:
    ds.register_dataset(ctx, arithmetic(n=3))
    ds.register_dataset(ctx, arithmetic(version="1.1.0", n=2))
    add, explode = python_harness(ctx, "add"), python_harness(ctx, "explode")
    first = run_to_end(ctx, add, dataset="sums@1.0.0")
    second = run_to_end(ctx, explode, dataset="sums@1.0.0")
    third = run_to_end(ctx, add, dataset="sums@1.1.0")
    queued = runs.start_run(ctx, StartRunRequest(dataset="sums", harness=add))

    assert [r.id for r in runs.list_runs(ctx)] == [queued.id, third.id, second.id, first.id]
    assert [r.id for r in runs.list_runs(ctx, dataset="sums@1.0.0")] == [second.id, first.id]
    assert [r.id for r in runs.list_runs(ctx, harness="explode")] == [second.id]
    assert [r.id for r in runs.list_runs(ctx, status="queued")] == [queued.id]
    page = runs.list_runs(ctx, limit=2)
    rest = runs.list_runs(ctx, limit=2, before=page[-1].id)
    assert [r.id for r in page + rest] == [queued.id, third.id, second.id, first.id]
    assert runs.list_runs(ctx, before=first.id) == []
    with pytest.raises(NotFound, match="before"):
        runs.list_runs(ctx, before="run_nope")
    # the Wilson interval comes with the pass rate (2 of 3 pass: c1 errors)
    listed = runs.list_runs(ctx, harness="explode")[0]
    assert listed.pass_rate == pytest.approx(2 / 3)
    assert listed.pass_interval is not None
    assert listed.pass_interval.low < 2 / 3 < listed.pass_interval.high


def test_results_filter_by_outcome_search_by_case_id_and_page_with_the_cursor(
    ctx: Context,
) -> None:
    ds.register_dataset(ctx, arithmetic())
    run = run_to_end(ctx, python_harness(ctx, "explode"))  # c1 and c11 error
    assert _ids(run_results.list_run_results(ctx, run.id, outcome="errored")) == ["c1", "c11"]
    assert _ids(run_results.list_run_results(ctx, run.id, outcome="failed")) == ["c1", "c11"]
    passed = run_results.list_run_results(ctx, run.id, outcome="passed")
    assert len(passed) == 10 and "c1" not in _ids(passed)
    assert passed[0].scores[0].metric == "numeric"  # the page's scores come along
    assert run_results.list_run_results(ctx, run.id, outcome="not_run") == []
    assert _ids(run_results.list_run_results(ctx, run.id, search="1")) == ["c1", "c10", "c11"]
    assert _ids(run_results.list_run_results(ctx, run.id, search="C1", outcome="passed")) == ["c10"]
    assert run_results.list_run_results(ctx, run.id, search="%") == []  # a literal, not LIKE
    page = run_results.list_run_results(ctx, run.id, outcome="passed", limit=4)
    last = page[-1]
    after = f"{last.position}:{last.sample}"
    rest = run_results.list_run_results(ctx, run.id, outcome="passed", after=after)
    assert _ids(page + rest) == _ids(passed)
    with pytest.raises(InvalidInput, match="outcome"):
        run_results.list_run_results(ctx, run.id, outcome="bogus")  # type: ignore[arg-type]


def test_regressed_and_fixed_are_decided_against_a_baseline_by_id_or_tag(ctx: Context) -> None:
    ds.register_dataset(ctx, arithmetic())
    ds.register_dataset(ctx, arithmetic("other"))
    good = run_to_end(ctx, python_harness(ctx, "add"))
    bad = run_to_end(ctx, python_harness(ctx, "explode"))
    regressed = run_results.list_run_results(ctx, bad.id, outcome="regressed", baseline=good.id)
    assert _ids(regressed) == ["c1", "c11"]
    scorecards.set_scorecard_tags(ctx, good.scorecard_id, ["baseline"])
    by_tag = run_results.list_run_results(ctx, bad.id, outcome="regressed", baseline="baseline")
    assert _ids(by_tag) == ["c1", "c11"]
    fixed = run_results.list_run_results(ctx, good.id, outcome="fixed", baseline=bad.scorecard_id)
    assert _ids(fixed) == ["c1", "c11"]
    assert run_results.list_run_results(ctx, good.id, outcome="regressed", baseline=bad.id) == []
    with pytest.raises(InvalidInput, match="needs a baseline"):
        run_results.list_run_results(ctx, bad.id, outcome="regressed")
    elsewhere = run_to_end(ctx, "add@1.0.0", dataset="other")
    with pytest.raises(InvalidInput, match="same dataset"):
        run_results.list_run_results(ctx, bad.id, outcome="regressed", baseline=elsewhere.id)
    with pytest.raises(NotFound):
        run_results.list_run_results(ctx, bad.id, outcome="fixed", baseline="no-such-tag")


def test_a_rescored_baseline_uses_its_own_verdicts(ctx: Context) -> None:
    ds.register_dataset(ctx, arithmetic(n=3))
    good = run_to_end(ctx, python_harness(ctx, "add"))
    # a plan that fails everything: the answers are right, but not 'wrong'
    plan = [GraderSpec(id="answer-match", config={"expected": "wrong"})]
    strict = scorecards.rescore_run(ctx, good.id, plan)
    assert strict.passed == 0
    fixed = run_results.list_run_results(ctx, good.id, outcome="fixed", baseline=strict.id)
    assert _ids(fixed) == ["c0", "c1", "c2"]


def test_one_result_comes_with_its_trace_and_scores_and_summaries_count_runs_per_dataset(
    ctx: Context,
) -> None:
    team = make_team(ctx)
    ds.register_dataset(team.admin, arithmetic())
    ds.register_dataset(team.admin, arithmetic("quiet"))
    harness = python_harness(ctx, "explode")
    harnesses.register_harness(ctx, harnesses.get_harness(ctx, "explode", "1.0.0"), shared=True)
    run = run_to_end(team.member, harness)
    result = run_results.get_run_result(team.viewer, run.id, "c4")
    assert (result.answer, result.passed, result.scores[0].metric) == ("5", True, "numeric")
    assert result.trace is not None and result.trace.answer == "5"
    errored = run_results.get_run_result(team.viewer, run.id, "c1")
    assert errored.status == "error" and errored.error == "ValueError: cannot do c1"
    with pytest.raises(NotFound):
        run_results.get_run_result(team.viewer, run.id, "c99")
    with pytest.raises(NotFound):
        run_results.get_run_result(team.outsider, run.id, "c4")

    run_to_end(team.member, harness)
    runs.start_run(team.member, StartRunRequest(dataset="sums", harness=harness))
    summary = runs.summarize_dataset_runs(team.viewer, ["sums", "quiet", "absent"])
    assert set(summary) == {"sums"}
    assert summary["sums"].runs == 3
    assert summary["sums"].last_pass_rate == pytest.approx(10 / 12)
    assert runs.summarize_dataset_runs(team.outsider, ["sums"]) == {}
