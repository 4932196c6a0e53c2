"""Reading data on the dashboard over plain HTTP (issue 14 items 5 and 6): the case page's
Previous/Next follow the version's order, the dataset page jumps to a case number and pages
back, and the case page shows every field whole."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from benchbook.app import create_app
from benchbook.services import datasets
from benchbook.services.context import Context
from benchbook.settings import Settings

LONG_TEXT = "line one\n" + "word " * 200 + "\nthe end"
PATCH = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-old\n+new\n"


@pytest.fixture
def client(engine: Engine, settings: Settings, ctx: Context) -> Iterator[TestClient]:
    """Local admin mode; ``seq`` has 120 cases ``s000``…``s119``, the first with long fields."""
    cases = [
        {"id": f"s{i:03d}", "env": {"kind": "prompt"}, "task": f"Task {i}", "expected": "ok"}
        for i in range(120)
    ]
    cases[0]["metadata"] = {"notes": LONG_TEXT, "patch": PATCH, "config": {"a": [1, 2]}}
    datasets.register_dataset(
        ctx, datasets.parse_dataset({"id": "seq", "version": "1.0.0", "cases": cases})
    )
    with TestClient(create_app(settings, engine), follow_redirects=False) as http:
        yield http


def _link(page: str, testid: str) -> str | None:
    found = re.search(rf'href="([^"]+)" data-testid="{testid}"', page)
    return html.unescape(found.group(1)) if found else None


def test_the_case_page_steps_through_the_version_and_shows_every_field_whole(
    client: TestClient,
) -> None:
    first = client.get("/datasets/seq/cases/s000").text
    assert _link(first, "previous-case") is None
    assert _link(first, "next-case") == "/datasets/seq/cases/s001?v=latest"
    assert html.escape("word " * 200) in first  # nothing cut at 400 characters
    assert '<span class="pl pl-add">+new</span>' in first
    assert re.search(r'<details class="json" open><summary>object · 1 key</summary>', first)
    middle = client.get("/datasets/seq/cases/s060?v=1.0.0").text
    assert _link(middle, "previous-case") == "/datasets/seq/cases/s059?v=1.0.0"
    assert _link(middle, "next-case") == "/datasets/seq/cases/s061?v=1.0.0"
    assert "case 61" in middle
    last = client.get("/datasets/seq/cases/s119").text
    assert _link(last, "next-case") is None


def test_the_dataset_page_jumps_to_a_case_number_and_pages_back(client: TestClient) -> None:
    page = client.get("/datasets/seq", params={"at": 75}).text
    assert "cases 75–120 of 120" in page
    assert re.findall(r'class="case-id" title="([^"]+)"', page)[0] == "s074"
    back = _link(page, "previous-page")
    assert back == "/datasets/seq?v=latest&after=23#cases-title"
    assert "cases 25–74 of 120" in client.get(back).text
    top = client.get("/datasets/seq", params={"at": 1}).text
    assert "cases 1–50 of 120" in top and _link(top, "previous-page") is None
    assert client.get("/datasets/seq", params={"at": 0}).status_code == 400


def test_the_diff_page_shows_changed_leaves_line_diffs_and_pages_the_cases(
    client: TestClient, ctx: Context
) -> None:
    cases = [
        {"id": f"s{i:03d}", "env": {"kind": "prompt"}, "task": f"Task {i}", "expected": "ok"}
        for i in range(100)
    ]
    cases += [
        {"id": f"n{i:03d}", "env": {"kind": "prompt"}, "task": f"New {i}", "expected": "ok"}
        for i in range(60)
    ]
    notes = LONG_TEXT.replace("the end", "the very end")
    cases[0]["metadata"] = {"notes": notes, "patch": PATCH, "config": {"a": [1, 3]}}
    payload = {"id": "seq", "version": "1.1.0", "description": "Second", "cases": cases}
    datasets.register_dataset(ctx, datasets.parse_dataset(payload))
    page = client.get("/datasets/seq/diff")
    assert page.status_code == 200
    text = html.unescape(page.text)
    assert text.index('data-testid="diff-summary"') < text.index("Dataset metadata")
    leaves = re.findall(r'<tr data-testid="leaf"><th scope="row"><code>([^<]+)</code>', text)
    assert leaves == ["description", "metadata.config.a[1]", "metadata.notes"]
    assert '<span class="pl pl-del">-the end</span>' in text
    assert '<span class="pl pl-add">+the very end</span>' in text
    assert "1–50 of 60" in text and "page 1 of 2" in text
    second = html.unescape(client.get(_link(page.text, "diff-next") or "").text)
    assert "page 2 of 2" in second and "51–60 of 60" in second and "n059" in second


def test_the_dataset_page_searches_cases_by_id_and_text(client: TestClient) -> None:
    def found(q: str) -> list[str]:
        page = client.get("/datasets/seq", params={"q": q})
        assert page.status_code == 200
        return re.findall(r'<code class="case-id" title="([^"]+)">', page.text)

    assert found("s07") == [f"s{i:03d}" for i in range(70, 80)]
    assert found("TASK 11") == ["s011"] + [f"s{i}" for i in range(110, 120)]
    assert found("the end") == ["s000"]  # metadata text is content too
    assert found("100%") == [] and found("s_0") == []  # LIKE wildcards are literal
    assert "First 50 cases" in client.get("/datasets/seq", params={"q": "task"}).text
