"""The start-run form, the run actions (rescore, scorecard tags) and the compare page (SPEC G,
H.7) against a real ``benchbook serve`` whose worker executes the runs, in Chromium.

The server gets this checkout's root on ``PYTHONPATH`` so its worker can import the python
harnesses of ``tests/eval/harnesses``. ``run_actions.html`` is also rendered on its own with a
member's and a viewer's context (the run page that includes it is built elsewhere).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchbook.contracts.run import CaseInput, StartRunRequest
from benchbook.services import accounts, runs, scorecards
from benchbook.services import datasets as ds
from benchbook.services.context import Context, Principal, local_admin_context
from benchbook.settings import Settings
from benchbook.store.engine import make_engine
from benchbook.web.render import TEMPLATES
from benchbook.web.session import Page
from tests.eval.harnesses import agents
from tests.eval.test_runs import arithmetic, python_harness
from tests.web.conftest import PASSWORD, SCREENSHOTS, Server, log_in, serve, shot

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def server(
    web_database: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """``benchbook serve`` with its run worker, able to import ``tests.eval.harnesses``."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    with serve(web_database, tmp_path_factory.mktemp("home"), {"PYTHONPATH": path}) as running:
        yield running


@pytest.fixture(scope="module")
def root(
    server: Server, web_database: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Context]:
    """The local admin on the server's database, with ``sums``@1.0.0 (12 cases), ``pairs``@1.0.0
    (2 cases) and the harnesses ``explode``, ``add-wrong-on-threes`` and ``add``; Olga is the
    admin of another workspace."""
    engine = make_engine(web_database[1])
    home = Path(tmp_path_factory.mktemp("root"))
    ctx = local_admin_context(engine, Settings(home=home, database_url=web_database[1]))
    ds.register_dataset(ctx, arithmetic("sums"))
    ds.register_dataset(ctx, arithmetic("pairs", n=2))
    for function in ("explode", "add_wrong_on_threes", "add"):
        python_harness(ctx, function)  # python harnesses: installation admins only
    accounts.create_workspace(ctx, "other")
    accounts.create_user(ctx, "olga@example.org", "Olga Other", PASSWORD)
    other = Context(
        Principal("local-admin", "Local admin", "other", "admin", True), engine, ctx.settings
    )
    accounts.add_member(other, "olga@example.org", "admin")
    yield ctx
    engine.dispose()


def _wait(page: Any, run_id: str) -> dict[str, Any]:
    """Poll ``GET /api/runs/{id}`` (the page's session) until the run has ended."""
    deadline = time.monotonic() + 120
    while True:
        run: dict[str, Any] = page.request.get(f"/api/runs/{run_id}").json()
        if run["status"] in runs.TERMINAL:
            return run
        assert time.monotonic() < deadline, run
        time.sleep(0.2)


def _start_from_form(page: Any, dataset: str, harness: str) -> str:
    page.goto("/runs")
    page.click("[data-testid=start-run]")
    page.wait_for_url(re.compile(r".*/runs/new$"))
    page.fill("#run-dataset", dataset)
    page.select_option("#run-harness", harness)
    page.click("text=Start run")
    page.wait_for_url(re.compile(r".*/runs/run_[0-9a-f]+$"))
    return str(page.url.rsplit("/", 1)[1])


def _csrf(page: Any) -> str:
    return str(page.locator('meta[name="csrf-token"]').get_attribute("content"))


def _post(page: Any, path: str, form: dict[str, str]) -> Any:
    """A form post with the page's session and CSRF token, redirects not followed."""
    return page.request.post(path, form={**form, "csrf": _csrf(page)}, max_redirects=0)


def _expected(harness: Any, n: int = 12) -> dict[str, str]:
    """case id → ``passed``/``failed``/``error`` of a harness on ``arithmetic(n)``."""
    out = {}
    for i in range(n):
        case = CaseInput(case_id=f"c{i}", env={"kind": "prompt"}, task=f"What is {i}+1?")
        try:
            out[case.case_id] = "passed" if harness(case) == str(i + 1) else "failed"
        except ValueError:
            out[case.case_id] = "error"
    return out


@pytest.fixture(scope="module")
def flow(root: Context, server: Server, browser: Any) -> Iterator[dict[str, Any]]:
    """The acceptance flow's first half, in the browser as Ada Admin: a run of ``explode`` from
    the form, its scorecard tagged ``baseline`` by the tags form's post, a run of
    ``add-wrong-on-threes`` from the form; both finished."""
    context = browser.new_context(viewport={"width": 1280, "height": 800}, base_url=server.url)
    page = context.new_page()
    log_in(page, "admin@example.org")
    first = _start_from_form(page, "sums", "explode@1.0.0")
    base = _wait(page, first)
    # Tag it on the real run page, through the run-actions block it includes.
    sc = base["scorecard_id"]
    page.goto(f"/runs/{first}")
    assert page.locator("[data-testid=run-actions]").is_visible()
    page.click("[data-testid=run-actions] > summary")  # folded below the results (issue 30)
    page.fill(f"#tags-{sc}", "baseline")
    with page.expect_response(lambda r: r.request.method == "POST") as posted:
        page.click(f"[data-testid=tags-{sc}] >> text=Save tags")
    tagged = posted.value
    page.wait_for_url(re.compile(rf".*/runs/{first}$"))
    assert page.locator(f"#tags-{sc}").input_value() == "baseline"
    second = _start_from_form(page, "sums@1.0.0", "add-wrong-on-threes@1.0.0")
    cand = _wait(page, second)
    yield {"baseline": base, "candidate": cand, "tagged": tagged}
    context.close()


def test_a_member_starts_runs_from_the_form_and_tags_the_baseline(
    flow: dict[str, Any], root: Context
) -> None:
    base, cand = flow["baseline"], flow["candidate"]
    assert (base["status"], base["harness"], base["counts"]["passed"]) == (
        "finished",
        "explode@1.0.0",
        10,
    )
    assert (cand["status"], cand["harness"], cand["dataset"]) == (
        "finished",
        "add-wrong-on-threes@1.0.0",
        "sums@1.0.0",
    )
    assert flow["tagged"].status == 303  # POST-redirect-GET to the run page
    assert flow["tagged"].headers["location"] == f"/runs/{base['id']}"
    assert scorecards.get_scorecard(root, base["scorecard_id"]).tags == ["baseline"]


def test_the_compare_page_defaults_to_the_baseline_tag_and_filters_to_regressions(
    flow: dict[str, Any], new_page: Any, server: Server
) -> None:
    base, cand = flow["baseline"], flow["candidate"]
    before, after = _expected(agents.explode), _expected(agents.add_wrong_on_threes)
    regressed = [k for k in before if before[k] == "passed" and after[k] != "passed"]
    fixed = [k for k in before if before[k] != "passed" and after[k] == "passed"]
    assert regressed == ["c0", "c3", "c6", "c9"] and fixed == ["c1", "c11"]  # the tables differ

    page = new_page()
    log_in(page, "viewer@example.org")  # reading a comparison is runs:read
    page.goto(f"/compare?candidate={cand['id']}")  # a run id: its own scorecard
    verdict = page.locator("[data-testid=verdict]").inner_text()
    assert re.fullmatch(
        r"−16\.7 points, 95% CI \[−?\d+\.\d, [+−]\d+\.\d\], McNemar p = 0\.69:"
        r" no significant change",
        verdict,
    ), verdict
    assert page.locator("#pick-baseline").input_value() == base["scorecard_id"]
    assert page.locator("#pick-candidate").input_value() == cand["scorecard_id"]
    counts = {
        a.get_attribute("data-transition"): int(a.locator(".num").inner_text())
        for a in page.locator("[data-testid=transitions] a[data-transition]").all()
    }
    assert counts == {
        "regressed": 4,
        "fixed": 2,
        "missing_in_candidate": 0,
        "new_in_candidate": 0,
        "still_failing": 0,
        "still_passing": 6,
    }
    shown = page.locator("[data-testid=pairs] > li")
    order = [li.get_attribute("data-transition") for li in shown.all()]
    assert order == ["regressed"] * 4 + ["fixed"] * 2 + ["still_passing"] * 6  # regression first
    assert page.locator("[data-testid=not-comparable]").count() == 0
    assert page.locator("[data-testid=run-actions], form[method=post] textarea").count() == 0
    shot(page, server, "compare")

    page.click("[data-testid=transitions] a[data-transition=regressed]")
    page.wait_for_url("**show=regressed")
    rows = page.locator("[data-testid=pairs] > li")
    assert [li.get_attribute("data-case") for li in rows.all()] == regressed
    first = rows.first
    answers = first.locator("pre.answer").all_inner_texts()
    assert answers == ["1", "2"]  # c0: What is 0+1? — baseline right, candidate off by one
    assert "numeric 1 → 0 (-1)" in " ".join(first.locator(".pair-metrics").inner_text().split())
    links = first.locator("a", has_text="trace")
    assert [a.get_attribute("href") for a in links.all()] == [
        f"/runs/{base['id']}/cases/c0?sample=0",
        f"/runs/{cand['id']}/cases/c0?sample=0",
    ]
    run_links = page.locator(".sides a").all()
    assert [a.get_attribute("href") for a in run_links] == [
        f"/runs/{base['id']}",
        f"/runs/{cand['id']}",
    ]
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(
        path=str(SCREENSHOTS / f"{server.backend}-compare-regressed.png"), full_page=True
    )
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(
        path=str(SCREENSHOTS / f"{server.backend}-compare-regressed-390.png"), full_page=True
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert page.external == []


def test_a_rescore_is_a_new_scorecard_and_a_different_plan_is_flagged_not_comparable(
    flow: dict[str, Any], new_page: Any, root: Context, server: Server
) -> None:
    base = flow["baseline"]
    page = new_page()
    log_in(page, "admin@example.org")
    response = _post(page, f"/runs/{base['id']}/rescore", {"graders": "answer-match"})
    assert response.status == 303 and response.headers["location"] == f"/runs/{base['id']}"
    cards = scorecards.list_scorecards(root, base["id"])
    assert [c.rescore_of for c in cards] == [None, base["scorecard_id"]]
    page.goto(f"/compare?baseline={base['scorecard_id']}&candidate={cards[1].id}")
    banner = page.locator("[data-testid=not-comparable]")
    assert "Not comparable: grader hash differs." in banner.inner_text()
    shot(page, server, "compare-not-comparable")


def test_form_errors_are_shown_beside_the_field_and_keep_the_input(
    flow: dict[str, Any], new_page: Any, server: Server
) -> None:
    page = new_page()
    log_in(page, "admin@example.org")
    page.goto("/runs/new")
    page.fill("#run-dataset", "nope")
    page.select_option("#run-harness", "add@1.0.0")
    page.fill("#run-case-ids", "c1, c2")
    page.fill("#run-repeats", "3")
    page.click("text=Start run")
    error = page.locator("[data-error-for=dataset]")
    assert error.inner_text() == "dataset 'nope' not found"
    assert page.locator("#run-dataset").get_attribute("aria-invalid") == "true"
    values = [page.locator(f"#run-{k}").input_value() for k in ("dataset", "case-ids", "repeats")]
    assert values == ["nope", "c1, c2", "3"]
    assert page.locator("#run-harness").input_value() == "add@1.0.0"

    page.fill("#run-dataset", "sums")
    page.fill("#run-repeats", "lots")
    page.click("text=Start run")
    assert (
        page.locator("[data-error-for=repeats]").inner_text()
        == "repeats: 'lots' is not a whole number"
    )
    page.fill("#run-repeats", "1")
    page.fill("#run-case-ids", "c1 c99")
    page.click("text=Start run")
    assert "c99" in page.locator("[data-error-for=case_ids]").inner_text()
    page.fill("#run-case-ids", "")
    page.fill("#run-graders", "nope-grader")
    page.click("text=Start run")
    assert (
        "unknown grader ids: nope-grader" in page.locator("[data-error-for=graders]").inner_text()
    )
    assert page.locator("#run-graders").input_value() == "nope-grader"
    shot(page, server, "run-new-error")
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(
        path=str(SCREENSHOTS / f"{server.backend}-run-new-error-390.png"), full_page=True
    )
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_a_viewer_sees_no_start_form_and_forced_posts_are_403(
    flow: dict[str, Any], new_page: Any, root: Context
) -> None:
    base = flow["baseline"]
    page = new_page()
    log_in(page, "viewer@example.org")
    response = page.goto("/runs/new")
    assert response.status == 403
    assert page.locator("form[action='/runs']").count() == 0
    assert page.goto(f"/runs/{base['id']}").status == 200
    assert page.locator("[data-testid=run-actions]").count() == 0
    page.goto("/runs")
    assert page.locator("[data-testid=start-run]").count() == 0
    page.goto("/compare")
    start = {"dataset": "sums", "harness": "add@1.0.0", "repeats": "1", "concurrency": "4"}
    for path, form in (
        ("/runs", start),
        (f"/runs/{base['id']}/rescore", {"graders": "numeric"}),
        (f"/scorecards/{base['scorecard_id']}/tags", {"tags": "prod"}),
    ):
        assert _post(page, path, form).status == 403, path
    assert scorecards.get_scorecard(root, base["scorecard_id"]).tags == ["baseline"]
    assert len(runs.list_runs(root, dataset="sums")) == 2  # nothing started


def test_bad_pairs_are_clear_errors_and_unknown_or_foreign_scorecards_are_404(
    flow: dict[str, Any], new_page: Any, root: Context, server: Server
) -> None:
    base, cand = flow["baseline"], flow["candidate"]
    admin = Context(root.principal, root.engine, root.settings)
    other = runs.start_run(admin, StartRunRequest(dataset="pairs", harness="add"))
    page = new_page()
    log_in(page, "admin@example.org")
    other_card = _wait(page, other.id)["scorecard_id"]
    response = page.goto(f"/compare?baseline={other_card}&candidate={cand['scorecard_id']}")
    assert response.status == 400
    problem = page.locator("[data-testid=problem-text]").inner_text()
    assert problem == (
        "the baseline is a scorecard of pairs@1.0.0 and the candidate of sums@1.0.0: "
        "compare scorecards of the same dataset"
    )
    assert page.locator("#pick-candidate").input_value() == cand["scorecard_id"]
    shot(page, server, "compare-different-datasets")
    assert page.goto("/compare?candidate=sc_0000000000000000").status == 404
    assert page.goto(f"/compare?baseline=sc_nope&candidate={cand['id']}").status == 404
    assert page.goto(f"/compare?candidate={cand['id']}&after=zz").status == 400

    olga = new_page()
    olga.goto("/login")
    olga.fill("#email", "olga@example.org")
    olga.fill("#password", PASSWORD)
    olga.click("button[type=submit]")
    olga.wait_for_url("**/datasets")
    url = f"/compare?baseline={base['scorecard_id']}&candidate={cand['scorecard_id']}"
    assert olga.goto(url).status == 404
    assert _post(olga, f"/scorecards/{base['scorecard_id']}/tags", {"tags": "x"}).status == 404


def test_the_run_actions_block_shows_controls_only_when_the_services_allow_them(
    flow: dict[str, Any], root: Context
) -> None:
    base = flow["baseline"]
    run = runs.get_run(root, base["id"])
    cards = scorecards.list_scorecards(root, run.id)
    template = TEMPLATES.get_template("run_actions.html")

    def rendered(role: str, status: str | None = None, user: str | None = None) -> str:
        who = Principal(user or run.created_by or "", "Someone", "default", role)  # type: ignore[arg-type]
        page = Page(Context(who, root.engine, root.settings), session="s", csrf="t")
        shown = run.model_copy(update={"status": status or run.status})
        return template.render(page=page, run=shown, scorecards=cards)

    # Tags of a run someone else started need runs:manage (admins): docs/runs.md "Whose run".
    other = rendered("member", user="someone-else")
    assert "/tags" not in other and f'action="/runs/{run.id}/rescore"' in other
    assert f'action="/scorecards/{cards[0].id}/tags"' in rendered("admin", user="someone-else")
    member = rendered("member")
    assert f'action="/scorecards/{cards[0].id}/tags"' in member
    assert 'value="baseline"' in member
    assert f'action="/runs/{run.id}/rescore"' in member
    assert "/runs/new?dataset=sums%401.0.0&amp;harness=explode%401.0.0" in member
    assert rendered("viewer").strip() == ""
    running = rendered("member", "running")
    assert "/tags" not in running and "/rescore" not in running and "/runs/new" in running
    failed = rendered("member", "failed")
    assert "/tags" not in failed and "/rescore" in failed


def test_the_start_run_form_never_offers_an_external_harness(
    flow: dict[str, Any], new_page: Any, root: Context, server: Server
) -> None:
    """An external harness's runs are reported, never started here: the form offered it and
    then refused the run (a new user's trial, 2026-12-06)."""
    from benchbook.services import harnesses

    external = {"id": "elsewhere", "version": "1.0.0", "kind": "external", "config": {}}
    harnesses.register_harness(root, harnesses.parse_harness(external))
    page = new_page()
    log_in(page, "admin@example.org")
    page.goto("/runs/new")
    offered = page.locator("#run-harness option").evaluate_all("els => els.map(e => e.value)")
    assert "add@1.0.0" in offered
    assert not [ref for ref in offered if ref.startswith("elsewhere")]
    assert "not the external ones" in page.locator("#harness-help").inner_text()
