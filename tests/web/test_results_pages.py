"""Results people would rather look at than read (issue 30) in a real browser at 1280×800 and
390×844: the leaderboard with its cost–accuracy chart (points and frontier checked from the DOM
against the service's scorecards), a case's history across runs, the run page's order (results
first, actions folded) and picking two runs in the runs list to compare. One server and one
browser for the module; the runs are reported (``report_run``), so no harness executes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchbook.services import accounts, leaderboards, scorecards
from benchbook.services.auth import authenticate_api_key
from benchbook.services.context import Context, local_admin_context
from benchbook.services.keys import create_api_key
from benchbook.settings import Settings
from benchbook.store.engine import make_engine
from tests.services.leaderboard_stage import ENTRIES, FRONTIER, Entry, report, stage
from tests.web.conftest import SCREENSHOTS, Server, log_in, serve
from tests.web.test_pages import _severe


@pytest.fixture(scope="module")
def server(
    web_database: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """``benchbook serve`` without its run worker (reported runs need none)."""
    home = tmp_path_factory.mktemp("home")
    with serve(web_database, home, {"BENCHBOOK_RUN_WORKER": "false"}) as running:
        yield running


@pytest.fixture(scope="module")
def seeded(
    server: Server, web_database: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    """``board``@1.0.0 with the four runs of :mod:`tests.services.leaderboard_stage`, a second
    version of ``mid`` and a run on ``board``@1.1.0 (trends); another workspace's run of its
    own ``board``."""
    engine = make_engine(web_database[1])
    home = Path(tmp_path_factory.mktemp("results"))
    root = local_admin_context(engine, Settings(home=home, database_url=web_database[1]))
    key = create_api_key(root, "web", "admin", user="admin@example.org").key
    ada = Context(authenticate_api_key(engine, key), engine, root.settings)
    made = stage(ada)
    scorecards.set_scorecard_tags(ada, made["best@1.0.0"].scorecard_id or "", ["prod"])
    made["mid@1.1.0"] = report(ada, "board", Entry("mid@1.1.0", 8, 0.012))
    from benchbook.services import datasets as ds
    from tests.eval.test_runs import arithmetic

    ds.register_dataset(ada, arithmetic("board", version="1.1.0", n=10))
    made["mid@1.1.0 on 1.1.0"] = report(ada, "board@1.1.0", Entry("mid@1.1.0", 9, 0.012))
    # two runs of one harness@version that disagree on c3 and c4: flaky across runs
    made["wobbly 1"] = report(ada, "board@1.1.0", Entry("wobbly@1.0.0", 5, 0.001))
    made["wobbly 2"] = report(ada, "board@1.1.0", Entry("wobbly@1.0.0", 3, 0.001))
    accounts.create_workspace(root, "elsewhere", "Elsewhere")
    there = accounts.in_workspace(root, "elsewhere")
    hidden = stage(there)
    yield {"ada": ada, "runs": made, "hidden": hidden}
    engine.dispose()


def shots(page: Any, server: Server, name: str) -> None:
    """Whole-page screenshots at 1280×800 and 390×844; at 390 nothing scrolls sideways and
    axe finds no serious or critical issue."""
    assert _severe(page) == [], name
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.screenshot(path=str(SCREENSHOTS / f"{server.backend}-{name}.png"), full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=str(SCREENSHOTS / f"{server.backend}-{name}-390.png"), full_page=True)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"{name} scrolls sideways at 390 px ({width} px wide)"
    page.set_viewport_size({"width": 1280, "height": 800})


def test_the_leaderboard_ranks_harnesses_and_its_chart_matches_the_scorecards(
    new_page: Any, server: Server, seeded: dict[str, Any]
) -> None:
    page = new_page()
    log_in(page, "viewer@example.org")
    page.goto("/datasets/board?v=1.0.0")
    page.click("a.btn:has-text('Leaderboard')")
    page.wait_for_url("**/datasets/board/leaderboard**")
    board = leaderboards.get_leaderboard(seeded["ada"], "board", "1.0.0")
    group = board.groups[0]
    table = page.locator("[data-testid=leaderboard]").first
    harnesses = table.locator("tbody tr").evaluate_all("rows => rows.map(r => r.dataset.harness)")
    assert harnesses == [r.harness for r in group.rows]
    assert harnesses[0] == "best@1.0.0" and len(harnesses) == len(ENTRIES) + 1
    on = table.locator("tbody tr[data-frontier=true]").evaluate_all(
        "rows => rows.map(r => r.dataset.harness)"
    )
    assert set(on) == {r.harness for r in group.rows if r.frontier}
    assert {"cheap@1.0.0", "best@1.0.0"} <= set(on) and "dominated@2.0.0" not in on
    row = " ".join(table.locator("tr[data-harness='cheap@1.0.0']").inner_text().split())
    assert "40.0%" in row and "$0.001" in row and "15,200" in row  # tokens, never 1.52e+04

    # the chart: one point per row at its cost and pass rate, linking to its run
    chart = page.locator("[data-testid=cost-chart]").first
    points = chart.locator("a.point").evaluate_all(
        """as => as.map(a => ({id: a.dataset.scorecard, cost: +a.dataset.cost,
            rate: +a.dataset.passRate, frontier: a.dataset.frontier === 'true',
            href: a.getAttribute('href'),
            cx: +a.querySelector('circle').getAttribute('cx'),
            cy: +a.querySelector('circle').getAttribute('cy')}))"""
    )
    by_card = {r.scorecard_id: r for r in group.rows}
    assert {p["id"] for p in points} == set(by_card)
    for p in points:
        r = by_card[p["id"]]
        assert p["cost"] == pytest.approx(r.cost_per_case_usd)
        assert p["rate"] == pytest.approx(r.pass_rate)
        assert p["frontier"] == r.frontier and p["href"] == f"/runs/{r.run_id}"
    # cheaper is further left, better is higher
    ordered = sorted(points, key=lambda p: p["cost"])
    assert [p["cx"] for p in ordered] == sorted(p["cx"] for p in points)
    ordered = sorted(points, key=lambda p: p["rate"])
    assert [p["cy"] for p in ordered] == sorted((p["cy"] for p in points), reverse=True)
    # the frontier line passes through exactly the frontier's points, cheapest first
    path = chart.locator("[data-testid=frontier-line]").get_attribute("d") or ""
    vertices = [tuple(map(float, v[1:].split(","))) for v in path.split()]
    frontier_points = {p["id"]: (p["cx"], p["cy"]) for p in points if p["frontier"]}
    assert vertices == [frontier_points[i] for i in group.frontier]
    assert len(group.frontier) == len(FRONTIER) + 1  # mid@1.1.0 is on it too
    assert not any(h in page.content() for h in (r.id for r in seeded["hidden"].values()))
    shots(page, server, "leaderboard")
    page.set_viewport_size({"width": 390, "height": 844})
    chart.screenshot(path=str(SCREENSHOTS / f"{server.backend}-leaderboard-chart-390.png"))
    page.set_viewport_size({"width": 1280, "height": 800})

    # sort by cost from the header; a point opens its run
    page.click("th >> text=Cost / case")
    page.wait_for_url("**sort=cost**")
    first = page.locator("[data-testid=leaderboard] tbody tr").first.get_attribute("data-harness")
    assert first == "cheap@1.0.0"
    page.locator("[data-testid=cost-chart] a.point circle").first.click()
    page.wait_for_url("**/runs/run_*")
    # the trends: mid over its versions, and mid@1.1.0 over the dataset's versions
    page.goto("/datasets/board/leaderboard?v=1.0.0")
    trends = page.locator("[data-testid=trend-chart]")
    assert trends.count() == 2
    assert page.external == []


def test_a_case_page_lists_the_cases_history_newest_first_with_links_to_traces(
    new_page: Any, server: Server, seeded: dict[str, Any]
) -> None:
    page = new_page()
    log_in(page, "viewer@example.org")
    page.goto("/datasets/board/cases/c5?v=1.0.0")
    history = page.locator("[data-testid=case-history]")
    rows = history.locator("tbody tr").evaluate_all(
        "rows => rows.map(r => [r.dataset.run, r.dataset.passed])"
    )
    made = seeded["runs"]
    newest_first = sorted(made.values(), key=lambda r: (r.created_at, r.id), reverse=True)
    assert [r for r, _ in rows] == [r.id for r in newest_first]
    verdicts = dict(rows)
    assert verdicts[made["best@1.0.0"].id] == "true" and verdicts[made["cheap@1.0.0"].id] == "false"
    assert not any(r.id in page.content() for r in seeded["hidden"].values())
    shots(page, server, "case-history")
    history.locator("tbody tr").first.locator("text=trace").click()
    page.wait_for_url(f"**/runs/{newest_first[0].id}/cases/c5**")
    page.set_viewport_size({"width": 390, "height": 844})
    jump = page.locator("[data-testid=jump-gold]")
    assert jump.is_visible() and jump.bounding_box()["y"] < 844  # the gold is one tap away
    page.screenshot(path=str(SCREENSHOTS / f"{server.backend}-trace-top-390.png"))
    jump.click()
    assert page.locator("[data-testid=gold]").bounding_box()["y"] < 844  # in view after the tap
    page.set_viewport_size({"width": 1280, "height": 800})


def test_the_run_page_puts_the_scorecard_and_cases_before_its_folded_actions(
    new_page: Any, server: Server, seeded: dict[str, Any]
) -> None:
    run = seeded["runs"]["mid@1.0.0"]
    page = new_page()
    log_in(page, "admin@example.org")
    page.goto(f"/runs/{run.id}")
    order = page.evaluate(
        """() => ['[data-scorecard]', '[data-testid=cases]', '[data-testid=run-actions]']
            .map(s => document.querySelector(s))
            .map(e => e.getBoundingClientRect().top + window.scrollY)"""
    )
    assert order == sorted(order), order
    actions = page.locator("[data-testid=run-actions]")
    assert actions.get_attribute("open") is None  # folded
    assert not page.locator("[data-testid=rescore]").is_visible()
    shots(page, server, "run-results-first")
    actions.locator("summary").click()
    assert page.locator("[data-testid=rescore]").is_visible()

    # the Flaky filter: the cases whose verdict differs from the other run of wobbly@1.0.0
    page.goto(f"/runs/{seeded['runs']['wobbly 2'].id}")
    page.click("[data-outcome=flaky]")
    page.wait_for_url("**outcome=flaky**")
    shown = page.locator("[data-testid=cases] tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.case)"
    )
    assert shown == ["c3", "c4"]


def test_the_runs_list_picks_a_baseline_and_a_candidate_and_opens_the_compare_page(
    new_page: Any, server: Server, seeded: dict[str, Any]
) -> None:
    base, cand = seeded["runs"]["mid@1.0.0"], seeded["runs"]["best@1.0.0"]
    page = new_page()
    log_in(page, "viewer@example.org")
    page.goto("/runs")
    row = " ".join(page.locator(f"tr[data-run={cand.id}]").inner_text().split())
    assert "best@1.0.0" in row and "prod" in row  # the scorecard's tag
    shots(page, server, "runs-list-pick")
    # at 1280 px the table fits: its last column (the picks) is not clipped
    wrap = page.locator("[data-testid=compare-picked]").evaluate(
        "() => { const w = document.querySelector('table').closest('.table-wrap');"
        " return [w.scrollWidth, w.clientWidth]; }"
    )
    assert wrap[0] <= wrap[1], f"/runs scrolls sideways at 1280 px: {wrap}"
    names = page.locator("tr[data-run] .harness-name").evaluate_all(
        "spans => spans.map(s => s.getClientRects().length)"
    )
    assert names and set(names) == {1}  # no harness name broken over two lines
    page.check(f"tr[data-run={base.id}] input[data-pick=baseline]")
    page.check(f"tr[data-run={cand.id}] input[data-pick=candidate]")
    page.click("[data-testid=compare-picked]")
    page.wait_for_url("**/compare?**")
    assert f"baseline={base.id}" in page.url and f"candidate={cand.id}" in page.url
    assert "Regressed" in page.inner_text("main") or "regressed" in page.inner_text("main")


def test_every_results_page_footer_names_benchbooks_version_not_the_datasets(
    new_page: Any, server: Server, seeded: dict[str, Any]
) -> None:
    """The pages whose context carries a dataset ``version`` (board@1.1.0, 1.0.0) still show
    Benchbook's own version in the footer (it was shadowed: "Benchbook 1.1.0")."""
    import benchbook

    run = seeded["runs"]["mid@1.1.0 on 1.1.0"]
    page = new_page()
    log_in(page, "viewer@example.org")
    for url in (
        "/datasets/board/leaderboard?v=1.1.0",
        "/datasets/board/leaderboard?v=1.0.0",
        f"/runs/{run.id}",
        f"/runs/{run.id}/cases/c5",
        "/datasets/board/cases/c5?v=1.1.0",
        "/datasets/board?v=1.1.0",
        "/runs",
    ):
        page.goto(url)
        footer = page.locator("footer.footer").inner_text()
        assert footer.startswith(f"Benchbook {benchbook.__version__} "), (url, footer)
