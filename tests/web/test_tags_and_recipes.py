"""Version tags edited on the dataset page, and the recipe page's datasets produced from it,
in a real browser against a real server (SPEC G)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from benchbook.services import imports, recipes
from benchbook.services.context import local_admin_context
from benchbook.settings import Settings
from benchbook.store.engine import make_engine
from tests.web.conftest import Server, log_in, shot

pytestmark = pytest.mark.slow

CASES = [{"id": f"t{i}", "env": {"kind": "prompt"}, "task": f"Say {i}."} for i in range(3)]
ROWS = (
    '{"id": "a", "question": "1+1", "answer": "2"}\n{"id": "b", "question": "2+2", "answer": "4"}\n'
)


def _register(page: Any, dataset_id: str, version: str, cases: list[dict[str, Any]]) -> None:
    page.goto(f"/register?id={dataset_id}")
    page.fill("#ds-id", dataset_id)
    page.fill("#ds-version", version)
    page.fill("#ds-cases", json.dumps(cases))
    page.click("button[value=validate]")
    page.click("button[value=register]")
    page.wait_for_url(f"**/datasets/{dataset_id}?v={version}")


def _save_tags(page: Any, tags: str) -> None:
    page.fill("#version-tags", tags)
    page.click("text=Save tags")
    page.wait_for_load_state()


def _tag_options(page: Any) -> list[str]:
    return [t.strip() for t in page.locator('#v optgroup[label="Tags"] option').all_inner_texts()]


def test_a_member_tags_versions_and_a_tag_moves_between_them(new_page: Any, server: Server) -> None:
    page = new_page()
    log_in(page, "admin@example.org")
    _register(page, "tagged", "1.0.0", CASES)
    _register(page, "tagged", "1.1.0", CASES[:2])
    page.goto("/datasets/tagged?v=1.0.0")
    assert "No tags" in page.locator("[data-testid=version-tags]").inner_text()
    _save_tags(page, "stable, paper-2024")
    assert page.url.endswith("/datasets/tagged?v=1.0.0")
    assert page.locator("[data-testid=version-tags] a").all_inner_texts() == [
        "paper-2024",
        "stable",
    ]
    assert _tag_options(page) == ["paper-2024 → 1.0.0", "stable → 1.0.0"]
    page.goto("/datasets/tagged?v=1.1.0")
    _save_tags(page, "stable")
    assert _tag_options(page) == ["paper-2024 → 1.0.0", "stable → 1.1.0"]
    page.goto("/datasets/tagged?v=stable")
    assert "2 cases" in page.locator("[data-testid=case-count]").inner_text()
    assert page.locator("#v option:checked").inner_text().strip() == "stable → 1.1.0"
    page.goto("/datasets/tagged?v=1.0.0")
    assert page.locator("#version-tags").input_value() == "paper-2024"
    assert "tagged" in page.locator(".timeline").inner_text()
    shot(page, server, "dataset-tags")
    refused = page.request.post(
        "/datasets/tagged/tags",
        form={
            "csrf": page.get_attribute("meta[name=csrf-token]", "content"),
            "version": "1.0.0",
            "tags": "2.0.0",
        },
    )
    assert refused.status == 400 and "SemVer" in refused.text()

    viewer = new_page()
    log_in(viewer, "viewer@example.org")
    viewer.goto("/datasets/tagged?v=1.0.0")
    assert viewer.locator("#version-tags").count() == 0
    assert viewer.locator("[data-testid=version-tags] a").all_inner_texts() == ["paper-2024"]
    forced = viewer.request.post(
        "/datasets/tagged/tags",
        form={
            "csrf": viewer.get_attribute("meta[name=csrf-token]", "content"),
            "version": "1.0.0",
            "tags": "mine",
        },
    )
    assert forced.status == 403


def test_the_recipe_page_lists_the_datasets_imported_from_it(
    new_page: Any, server: Server, web_database: tuple[str, str], tmp_path: Path
) -> None:
    engine = make_engine(web_database[1])
    ctx = local_admin_context(engine, Settings(home=tmp_path, database_url=web_database[1]))
    recipe = {
        "id": "arith",
        "version": "1.0.0",
        "description": "Sums from a JSONL file",
        "source": {"kind": "file", "format": "jsonl"},
        "mapping": {"id_field": "id", "task_field": "question", "answer_field": "answer"},
    }
    recipes.register_recipe(ctx, recipes.parse_recipe(recipe))
    recipes.register_recipe(ctx, recipes.parse_recipe({**recipe, "id": "unused"}))
    for target in ("arith", "arith-copy"):
        request = {"recipe": {"id": "arith"}, "id": target, "text": ROWS, "format": "jsonl"}
        imports.import_benchmark(ctx, imports.parse_import_request(request))
    engine.dispose()

    page = new_page()
    log_in(page, "admin@example.org")
    page.goto("/recipes/arith")
    produced = page.locator("[data-testid=produced]")
    rows = produced.locator("tbody tr")
    assert rows.count() == 2
    assert sorted(rows.locator("td:first-child a").all_inner_texts()) == ["arith", "arith-copy"]
    assert "1.0.0" in rows.first.locator("td").nth(2).inner_text()
    shot(page, server, "recipe")
    rows.locator("a", has_text=re.compile("^arith-copy$")).click()
    page.wait_for_url(re.compile(r"/datasets/arith-copy\?v=1\.0\.0$"))
    assert "2 cases" in page.locator("[data-testid=case-count]").inner_text()
    page.goto("/recipes/unused")
    assert "No dataset has been imported" in page.locator("[data-testid=produced]").inner_text()
