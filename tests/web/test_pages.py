"""Every page at 1280×800 in light and dark mode: screenshots, no request leaves the server,
and axe-core (bundled locally by ``axe-playwright-python``) finds no serious or critical issue.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.web.conftest import Server, log_in, shot

pytestmark = pytest.mark.slow
axe_sync = pytest.importorskip("axe_playwright_python.sync_playwright")

SEVERE = {"serious", "critical"}
CASES = [
    {
        "id": f"c{i}",
        "env": {"kind": "prompt"},
        "task": f"What is {i} + {i}?",
        "expected": str(2 * i),
    }
    for i in range(8)
]


def _register(page: Any, dataset_id: str, version: str, cases: list[dict[str, Any]]) -> None:
    page.goto(f"/register?id={dataset_id}")
    page.fill("#ds-id", dataset_id)
    page.fill("#ds-version", version)
    page.fill("#ds-description", "Arithmetic questions for the page tour.")
    page.fill("#ds-cases", json.dumps(cases))
    page.click("button[value=validate]")
    page.click("button[value=register]")
    page.wait_for_url(f"**/datasets/{dataset_id}?v={version}")


def _severe(page: Any) -> list[str]:
    results = axe_sync.Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:3]}"
        for v in results.response["violations"]
        if v.get("impact") in SEVERE
    ]


PAGES = [
    ("datasets", "/datasets"),
    ("datasets-search-empty", "/datasets?q=nothing-matches"),
    ("dataset-tour", "/datasets/tour"),
    ("dataset-more-cases", "/datasets/tour?cases=50"),
    ("case", "/datasets/tour/cases/c1"),
    ("diff-tour", "/datasets/tour/diff"),
    ("register", "/register"),
    ("import", "/import"),
    ("recipes", "/recipes"),
    ("account", "/account"),
    ("members", "/members"),
    ("not-found", "/datasets/no-such-dataset"),
]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_page_renders_offline_without_serious_accessibility_issues(
    new_page: Any, server: Server, scheme: str
) -> None:
    page = new_page(color_scheme=scheme)
    log_in(page, "admin@example.org")
    if page.locator("a[href='/datasets/tour']").count() == 0:
        _register(page, "tour", "1.0.0", CASES)
        changed = [
            dict(c, task=c["task"] + " Show your work.") if c["id"] == "c2" else c for c in CASES
        ]
        _register(page, "tour", "1.1.0", [*changed[1:], {**CASES[0], "id": "c9"}])
        page.goto("/datasets/tour")
        page.fill("#comment-body", "Looks right to me.")
        page.press("#comment-body", "Meta+Enter")
        page.wait_for_url("**/datasets/tour#activity")
    problems = {}
    for name, path in PAGES:
        response = page.goto(path)
        assert response is not None
        expected = 404 if name == "not-found" else 200
        assert response.status == expected, (path, response.status)
        shot(page, server, f"{scheme}-{name}")
        found = _severe(page)
        if found:
            problems[path] = found
    page.goto("/login")
    page.context.clear_cookies()
    page.goto("/login")
    shot(page, server, f"{scheme}-login")
    if found := _severe(page):
        problems["/login"] = found
    assert problems == {}
    assert page.external == []
