"""The leaderboard page without a browser (tester's findings): an unknown ``select`` is a 400
naming it, as in the API; every row shows its cases; unknown cost is "—" and listed under the
chart, never on it; subset runs only with ``partial=true``, in a group of their own."""

from __future__ import annotations

import html
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from benchbook.app import create_app
from benchbook.contracts.run import ReportedResult, ReportRunRequest
from benchbook.services import run_reports
from benchbook.services.context import Context
from benchbook.settings import Settings
from tests.services.leaderboard_stage import ENTRIES, Entry, report, stage


@pytest.fixture
def client(engine: Engine, settings: Settings, ctx: Context) -> Iterator[TestClient]:
    stage(ctx)
    report(ctx, "board", Entry("unpriced@1.0.0", 10, None))  # type: ignore[arg-type]
    one = ReportedResult(case_id="c4", sample=0, answer="5")
    run_reports.report_run(
        ctx, ReportRunRequest(dataset="board", harness="solo@1.0.0", results=[one])
    )
    with TestClient(create_app(settings, engine), follow_redirects=False) as http:
        yield http


def test_an_unknown_select_or_sort_is_a_400_naming_it(client: TestClient) -> None:
    for query in ({"select": "worst"}, {"sort": "vibes"}):
        response = client.get("/datasets/board/leaderboard", params=query)
        assert response.status_code == 400, query
        name = next(iter(query))
        assert f"{name} must be one of" in html.unescape(response.text)


def test_rows_show_cases_unknown_cost_and_subsets_apart(client: TestClient) -> None:
    page = html.unescape(client.get("/datasets/board/leaderboard").text)
    assert page.count('data-label="Cases" data-cases="10"') == len(ENTRIES) + 1
    assert "solo@1.0.0" not in page and "subset (" not in page
    assert "Tokens (total)" in page
    unknown = page.split('data-testid="cost-unknown"', 1)[1].split("</p>", 1)[0]
    assert "unpriced@1.0.0" in unknown
    assert 'data-harness="unpriced@1.0.0"' in page
    row = page.split('data-harness="unpriced@1.0.0"', 1)[1].split("</tr>", 1)[0]
    assert 'data-label="Cost / case">—<' in row and "$0" not in row
    chart = page.split('data-testid="cost-chart"', 1)[1].split("</svg>", 1)[0]
    assert "unpriced@1.0.0" not in chart
    with_subset = html.unescape(
        client.get("/datasets/board/leaderboard", params={"partial": "true"}).text
    )
    assert 'data-partial="true"' in with_subset and "subset (1 of 10)" in with_subset
