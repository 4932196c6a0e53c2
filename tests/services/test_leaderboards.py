"""The leaderboard of a dataset version (issue 30 §1) on SQLite and PostgreSQL: one row per
harness@version, the Pareto frontier marked, latest/best/all, sorts, tag and plan filters,
plans never ranked together, and a workspace's runs never on another's board."""

from __future__ import annotations

import hashlib

import pytest

from benchbook.contracts.dataset import GraderSpec
from benchbook.errors import InvalidInput, NotFound
from benchbook.services import scorecards
from benchbook.services.context import Context
from benchbook.services.leaderboards import get_leaderboard
from tests.services.leaderboard_stage import ENTRIES, FRONTIER, Entry, report, stage
from tests.services.test_accounts import make_team


def test_each_harness_version_is_one_row_ranked_by_pass_rate_with_the_frontier_marked(
    ctx: Context,
) -> None:
    made = stage(ctx)
    board = get_leaderboard(ctx, "board")
    assert board.dataset == "board@1.0.0"
    [group] = board.groups
    assert [r.harness for r in group.rows] == [
        "best@1.0.0",
        "mid@1.0.0",
        "dominated@2.0.0",
        "cheap@1.0.0",
    ]
    assert [r.rank for r in group.rows] == [1, 2, 3, 4]
    by = {r.harness: r for r in group.rows}
    for entry in ENTRIES:
        row = by[entry.harness]
        assert row.pass_rate == pytest.approx(entry.right / 10)
        assert row.cost_per_case_usd == pytest.approx(entry.cost)
        assert row.run_id == made[entry.harness].id
        assert row.pass_interval is not None and row.pass_interval.low < row.pass_rate
        assert (row.tokens_input, row.cases, row.errors) == (15_000, 10, 0)
        assert row.latency_p50_ms == 500 and row.latency_p95_ms == 1000
    assert {r.harness for r in group.rows if r.frontier} == set(FRONTIER)
    assert group.frontier == [by[h].scorecard_id for h in FRONTIER]  # cheapest first
    assert group.graders == []  # the cases' own graders
    assert [r.harness for r in get_leaderboard(ctx, "board", sort="cost").groups[0].rows] == [
        "cheap@1.0.0",
        "mid@1.0.0",
        "dominated@2.0.0",
        "best@1.0.0",
    ]


def test_latest_best_and_all_choose_among_a_harness_versions_scorecards(ctx: Context) -> None:
    stage(ctx)
    report(ctx, "board", Entry("mid@1.0.0", 5, 0.01))  # a worse, newer run of mid
    rows = get_leaderboard(ctx, "board").groups[0].rows
    assert {r.harness: r.pass_rate for r in rows}["mid@1.0.0"] == pytest.approx(0.5)
    best = get_leaderboard(ctx, "board", select="best").groups[0].rows
    assert {r.harness: r.pass_rate for r in best}["mid@1.0.0"] == pytest.approx(0.7)
    every = get_leaderboard(ctx, "board", select="all").groups[0].rows
    assert sorted(r.harness for r in every).count("mid@1.0.0") == 2 and len(every) == 5


def test_repeats_give_pass_at_k(ctx: Context) -> None:
    stage(ctx)
    report(ctx, "board", Entry("twice@1.0.0", 5, 0.01, repeats=2))
    rows = {r.harness: r for r in get_leaderboard(ctx, "board").groups[0].rows}
    assert set(rows["twice@1.0.0"].pass_at_k) == {"1", "2"}
    assert rows["mid@1.0.0"].pass_at_k == {}


def test_a_rescore_under_another_plan_is_a_separate_group_never_ranked_with_the_first(
    ctx: Context,
) -> None:
    made = stage(ctx)
    card = scorecards.rescore_run(ctx, made["mid@1.0.0"].id, [GraderSpec(id="answer-match")])
    board = get_leaderboard(ctx, "board")
    assert [len(g.rows) for g in board.groups] == [4, 1]
    rescored = board.groups[1]
    assert rescored.graders == ["answer-match"] and rescored.plan_hash == card.plan_hash
    assert rescored.rows[0].scorecard_id == card.id and rescored.rows[0].rank == 1
    only = get_leaderboard(ctx, "board", plan=card.plan_hash[:12])
    assert [g.plan_hash for g in only.groups] == [card.plan_hash]


def test_a_tag_filter_keeps_only_the_tagged_scorecards(ctx: Context) -> None:
    made = stage(ctx)
    scorecards.set_scorecard_tags(ctx, made["best@1.0.0"].scorecard_id or "", ["prod"])
    board = get_leaderboard(ctx, "board", tag="prod")
    assert [r.harness for r in board.groups[0].rows] == ["best@1.0.0"]
    assert board.groups[0].rows[0].tags == ["prod"]
    assert get_leaderboard(ctx, "board", tag="nothing").groups == []


def test_bad_choices_and_unknown_datasets_are_refused(ctx: Context) -> None:
    stage(ctx)
    with pytest.raises(InvalidInput, match="select"):
        get_leaderboard(ctx, "board", select="worst")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="sort"):
        get_leaderboard(ctx, "board", sort="luck")  # type: ignore[arg-type]
    with pytest.raises(NotFound):
        get_leaderboard(ctx, "nope")
    with pytest.raises(NotFound):
        get_leaderboard(ctx, "board", version="9.9.9")


def test_a_viewer_reads_the_board_and_another_workspace_sees_none_of_its_runs(
    ctx: Context,
) -> None:
    team = make_team(ctx)
    stage(team.root)
    assert len(get_leaderboard(team.viewer, "board").groups[0].rows) == 4
    with pytest.raises(NotFound):  # the dataset is the team's: not even its name leaks
        get_leaderboard(team.outsider, "board")
    # a shared dataset: the outsider's board holds only the outsider's own runs
    from benchbook.services import accounts
    from benchbook.services import datasets as ds
    from tests.eval.test_runs import arithmetic

    shared = accounts.in_workspace(ctx, "_shared")
    ds.register_dataset(shared, arithmetic("common", n=10))
    report(team.root, "common", ENTRIES[0])
    report(team.outsider, "common", ENTRIES[1])
    assert [r.harness for r in get_leaderboard(team.viewer, "common").groups[0].rows] == [
        "cheap@1.0.0"
    ]
    assert [r.harness for r in get_leaderboard(team.outsider, "common").groups[0].rows] == [
        "mid@1.0.0"
    ]


def test_the_board_costs_the_same_few_queries_for_four_rows_or_forty(ctx: Context) -> None:
    """No query per row: the scorecards come in one query, their tags in one more."""
    from sqlalchemy import event

    stage(ctx)

    def count() -> int:
        seen: list[str] = []

        def note(*args: object) -> None:
            seen.append(str(args[2]))

        event.listen(ctx.engine, "before_cursor_execute", note)
        try:
            board = get_leaderboard(ctx, "board", select="all")
        finally:
            event.remove(ctx.engine, "before_cursor_execute", note)
        assert board.groups
        return len(seen)

    few = count()
    for i in range(9):
        for entry in ENTRIES:
            report(
                ctx, "board", Entry(entry.harness.replace("@", f"-{i}@"), entry.right, entry.cost)
            )
    assert len(get_leaderboard(ctx, "board").groups[0].rows) == 40
    assert count() == few


def test_a_harness_with_no_priced_cost_has_unknown_cost_and_is_off_the_frontier(
    ctx: Context,
) -> None:
    """Unknown is not free: a run nothing was priced for (a command harness) had cost 0 and
    sat on the frontier at 100%."""
    stage(ctx)
    report(ctx, "board", Entry("unpriced@1.0.0", 10, None))  # type: ignore[arg-type]
    [group] = get_leaderboard(ctx, "board").groups
    row = next(r for r in group.rows if r.harness == "unpriced@1.0.0")
    assert row.rank == 1 and row.cost_usd is None and row.cost_per_case_usd is None
    assert not row.frontier and row.scorecard_id not in group.frontier
    assert {r.harness for r in group.rows if r.frontier} == set(FRONTIER)
    dumped = get_leaderboard(ctx, "board").model_dump(mode="json")
    assert dumped["groups"][0]["rows"][0]["cost_per_case_usd"] is None


def test_a_subset_run_is_never_ranked_with_full_runs_nor_hides_them(ctx: Context) -> None:
    """A one-case run at 100% was rank 1 against full runs, and as mid's newest scorecard
    ``latest`` dropped mid's full one."""
    from benchbook.contracts.run import ReportedResult, ReportRunRequest
    from benchbook.services import run_reports

    stage(ctx)
    for harness in ("mid@1.0.0", "solo@1.0.0"):
        one = ReportedResult(case_id="c4", sample=0, answer="5")
        run_reports.report_run(
            ctx, ReportRunRequest(dataset="board", harness=harness, results=[one])
        )
    for select in ("latest", "best"):
        board = get_leaderboard(ctx, "board", select=select)  # type: ignore[arg-type]
        [group] = board.groups
        assert board.dataset_cases == 10
        assert {r.harness for r in group.rows} == {e.harness for e in ENTRIES}
        assert all(r.cases == 10 and not r.partial for r in group.rows)
        assert {r.harness: r.pass_rate for r in group.rows}["mid@1.0.0"] == pytest.approx(0.7)
    board = get_leaderboard(ctx, "board", include_partial=True)
    full, subset = board.groups
    assert not full.partial and len(full.rows) == len(ENTRIES)
    assert subset.partial and subset.frontier == []
    assert sorted(r.harness for r in subset.rows) == ["mid@1.0.0", "solo@1.0.0"]
    assert all(r.cases == 1 and r.dataset_cases == 10 and r.partial for r in subset.rows)


def test_subset_runs_over_different_cases_are_ranked_in_groups_of_their_own(
    ctx: Context,
) -> None:
    """A new user's trial: with ``--include-partial`` a 1-case run on c4 (100%) was ranked
    above a 1-case run on c1 (0%) in one "subset" group, and a harness's newest 1-case run hid
    its older 200-case one; without it, an empty board said "no finished runs"."""
    from benchbook.contracts.run import ReportedResult, ReportRunRequest
    from benchbook.services import run_reports
    from benchbook.services.leaderboards import subset_of

    def one(harness: str, *answers: tuple[str, str]) -> None:
        results = [ReportedResult(case_id=c, sample=0, answer=a) for c, a in answers]
        request = ReportRunRequest(dataset="board", harness=harness, results=results)
        run_reports.report_run(ctx, request)

    from benchbook.services import datasets as ds
    from tests.eval.test_runs import arithmetic

    ds.register_dataset(ctx, arithmetic("board", n=10))
    one("last@1.0.0", *((f"c{i}", str(i + 1)) for i in range(5)))  # c0..c4, all right
    one("first@1.0.0", *((f"c{i}", "-1") for i in range(5)))  # c0..c4, all wrong
    one("last@1.0.0", ("c4", "5"))  # newer, another subset
    one("first@1.0.0", ("c1", "-1"))
    empty = get_leaderboard(ctx, "board")
    assert (empty.groups, empty.partial_hidden) == ([], 4)
    board = get_leaderboard(ctx, "board", include_partial=True)
    assert board.partial_hidden == 0
    named = {g.subset: [(r.harness, r.pass_rate) for r in g.rows] for g in board.groups}
    five = hashlib.sha256(b'["c0","c1","c2","c3","c4"]').hexdigest()[:8]
    assert named == {
        f"case ids c0, c1, c2 … (+2) [{five}]": [
            ("last@1.0.0", 1.0),
            ("first@1.0.0", 0.0),
        ],
        "case ids c4": [("last@1.0.0", 1.0)],
        "case ids c1": [("first@1.0.0", 0.0)],
    }
    assert all(g.partial and g.frontier == [] for g in board.groups)
    assert subset_of('{"tags": ["b", "a"], "limit": 200}') == "tags a, b · first 200 cases"
    assert subset_of("{}") == "a subset"
