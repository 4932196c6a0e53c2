"""Every page at 1280×800 in light and dark mode: screenshots, no request leaves the server,
and axe-core (bundled locally by ``axe-playwright-python``) finds no serious or critical issue.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchbook.contracts import Case, Dataset
from benchbook.contracts.dataset import PromptEnv
from benchbook.datasets.identity import case_body, dataset_meta, sha256_hex
from benchbook.services import imports, recipes
from benchbook.services.context import local_admin_context
from benchbook.services.datasets import store_version
from benchbook.settings import Settings
from benchbook.store.engine import make_engine
from tests.conftest import import_or_need
from tests.web.conftest import Server, log_in, shot

pytestmark = [pytest.mark.slow, pytest.mark.both_backends]
axe_sync = import_or_need("axe_playwright_python.sync_playwright")

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


BIG_CASES = 100_000
LONG_ID = "a-benchmark-with-a-deliberately-long-identifier-" + "x" * 60
LONG_TASK = "Plan a week-long trip " + "through-a-very-long-unbroken-token" * 12 + " and explain."
ARITH_ROWS = "".join(
    f'{{"id": "q{i}", "question": "What is {i} + {i}?", "answer": "{2 * i}"}}\n' for i in range(6)
)


def _big_rows(n: int) -> Iterator[tuple[str, bytes, str]]:
    for i in range(n):
        case = Case(
            id=f"q{i:06d}",
            env=PromptEnv(),
            task=f"Natalia sold clips to {i} of her friends in April. How many clips did she sell?",
            expected=str(i),
        )
        body = case_body(case)
        yield case.id, body, sha256_hex(body)


@pytest.fixture(scope="module")
def tour_data(server: Server, web_database: tuple[str, str], tmp_path_factory: Any) -> None:
    """Seeded through the services (as the API would): a recipe and a dataset imported from
    it, a dataset with a long id and an unbroken long task, and one of 100,000 cases."""
    engine = make_engine(web_database[1])
    home = Path(tmp_path_factory.mktemp("tour"))
    ctx = local_admin_context(engine, Settings(home=home, database_url=web_database[1]))
    recipe = {
        "id": "arith",
        "version": "1.0.0",
        "description": "Small sums read from a JSONL file, graded by exact match.",
        "source": {"kind": "file", "format": "jsonl"},
        "mapping": {"id_field": "id", "task_field": "question", "answer_field": "answer"},
        "origin": {"homepage": "https://example.org/arith", "license": "MIT"},
    }
    recipes.register_recipe(ctx, recipes.parse_recipe(recipe))
    request = {"recipe": {"id": "arith"}, "text": ARITH_ROWS, "format": "jsonl"}
    imports.import_benchmark(ctx, imports.parse_import_request(request))
    long_cases = [
        Case(id=f"{LONG_ID[:90]}-{i}", env=PromptEnv(), task=LONG_TASK, expected="ok")
        for i in range(3)
    ]
    long_meta = dataset_meta(Dataset(id=LONG_ID, version="1.0.0", cases=[]))
    store_version(
        ctx,
        LONG_ID,
        "1.0.0",
        long_meta,
        ((c.id, case_body(c), sha256_hex(case_body(c))) for c in long_cases),
    )
    big_meta = dataset_meta(Dataset(id="big", version="1.0.0", cases=[]))
    store_version(ctx, "big", "1.0.0", big_meta, _big_rows(BIG_CASES))
    engine.dispose()


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
    ("register", "/register"),
    ("import", "/import"),
    ("recipes", "/recipes"),
    ("recipe", "/recipes/arith"),
    ("dataset-from-recipe", "/datasets/arith"),
    ("dataset-long-id", f"/datasets/{LONG_ID}"),
    ("case-long-task", f"/datasets/{LONG_ID}/cases/{LONG_ID[:90]}-1"),
    ("dataset-100k", "/datasets/big"),
    ("dataset-100k-page", "/datasets/big?after=49954"),
    ("diff-tour", "/datasets/tour/diff"),
    ("account", "/account"),
    ("members", "/members"),
    ("not-found", "/datasets/no-such-dataset"),
]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_page_renders_offline_without_serious_accessibility_issues(
    new_page: Any, server: Server, scheme: str, tour_data: None
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
