"""A case's history across runs and flaky cases (issue 30 §2) on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from benchbook.contracts.run import ReportedResult, ReportRunRequest, Run
from benchbook.errors import InvalidInput, NotFound
from benchbook.services import datasets as ds
from benchbook.services import run_reports, run_results
from benchbook.services.context import Context
from benchbook.services.history import list_case_results, list_flaky_cases
from tests.eval.test_runs import arithmetic
from tests.services.test_accounts import make_team


def _report(ctx: Context, harness: str, answers: dict[tuple[str, int], str], ref: str = "h") -> Run:
    rows = [ReportedResult(case_id=c, sample=s, answer=a) for (c, s), a in answers.items()]
    return run_reports.report_run(ctx, ReportRunRequest(dataset=ref, harness=harness, results=rows))


def test_a_cases_history_lists_every_result_newest_run_first_and_pages_by_keyset(
    ctx: Context,
) -> None:
    ds.register_dataset(ctx, arithmetic("h", n=3))
    ds.register_dataset(ctx, arithmetic("h", version="1.1.0", n=3))
    first = _report(ctx, "a@1.0.0", {("c1", 0): "2", ("c1", 1): "5"}, "h@1.0.0")
    second = _report(ctx, "b@2.0.0", {("c1", 0): "9", ("c0", 0): "1"}, "h@1.1.0")
    third = _report(ctx, "a@1.0.0", {("c1", 0): "2"}, "h@1.0.0")
    page = list_case_results(ctx, "h", "c1")
    got = [(i.run_id, i.sample, i.passed) for i in page.items]
    assert got == [
        (third.id, 0, True),
        (second.id, 0, False),
        (first.id, 0, True),
        (first.id, 1, False),
    ]
    assert page.items[1].harness == "b@2.0.0" and page.items[1].dataset_version == "1.1.0"
    assert page.items[0].scores == {"numeric": 1.0} and page.next_before is None
    walked, before = [], None
    while True:
        part = list_case_results(ctx, "h", "c1", before=before, limit=1)
        walked += [(i.run_id, i.sample, i.passed) for i in part.items]
        if part.next_before is None:
            break
        before = part.next_before
    assert walked == got
    with pytest.raises(InvalidInput):
        list_case_results(ctx, "h", "c1", before="nonsense")
    with pytest.raises(NotFound):
        list_case_results(ctx, "h", "c1", before="run_nope:0")


def test_flaky_cases_differ_across_samples_or_across_runs_of_one_harness_version(
    ctx: Context,
) -> None:
    ds.register_dataset(ctx, arithmetic("h", n=3))
    # c0 always passes; c1 passes one sample of two (samples); c2 passes here, fails in the
    # other run of a@1.0.0 (runs); b@1.0.0's runs never count against a@1.0.0's
    run = _report(
        ctx,
        "a@1.0.0",
        {
            ("c0", 0): "1",
            ("c0", 1): "1",
            ("c1", 0): "2",
            ("c1", 1): "0",
            ("c2", 0): "3",
            ("c2", 1): "3",
        },
    )
    _report(ctx, "a@1.0.0", {("c0", 0): "1", ("c2", 0): "0"})
    _report(ctx, "b@1.0.0", {("c0", 0): "0"})
    flaky = {f.case_id: f for f in list_flaky_cases(ctx, run.id)}
    assert set(flaky) == {"c1", "c2"}
    assert flaky["c1"].kinds == ["samples"] and (flaky["c1"].passed, flaky["c1"].results) == (1, 2)
    assert flaky["c2"].kinds == ["runs"] and flaky["c2"].runs == 2
    page = run_results.list_run_results(ctx, run.id, outcome="flaky")
    assert sorted({r.case_id for r in page}) == ["c1", "c2"] and len(page) == 4
    with pytest.raises(NotFound):
        list_flaky_cases(ctx, "run_nope")


def test_history_and_flakiness_stay_in_the_callers_workspace(ctx: Context) -> None:
    team = make_team(ctx)
    ds.register_dataset(team.root, arithmetic("h", n=2))
    run = _report(team.root, "a@1.0.0", {("c0", 0): "1", ("c0", 1): "0"})
    assert len(list_case_results(team.viewer, "h", "c0").items) == 2
    assert list_case_results(team.outsider, "h", "c0").items == []
    with pytest.raises(NotFound):
        list_flaky_cases(team.outsider, run.id)
    assert [f.case_id for f in list_flaky_cases(team.viewer, run.id)] == ["c0"]
