"""The first-party catalog (SPEC F)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchbook.contracts import Recipe
from benchbook.datasets.catalog import CATALOG, get_entry
from benchbook.datasets.mapping import CaseBuilder, case_rows
from benchbook.datasets.sources.files import FileSource
from benchbook.datasets.sources.folder import FolderSource
from benchbook.datasets.swebench import swebench_image
from benchbook.errors import NotFound

REQUIRED = {
    "gsm8k",
    "gaia",
    "webvoyager",
    "mind2web",
    "swe-bench-lite",
    "swe-bench-verified",
    "contextbench-verified",
    "osworld",
    "travelplanner",
    "travelplanner-fs",
    "flex-travelplanner",
    "trek",
    "travelbench",
    "traveleval",
}


def test_the_catalog_holds_every_required_benchmark() -> None:
    assert set(CATALOG) >= REQUIRED


@pytest.mark.parametrize("entry_id", sorted(REQUIRED))
def test_each_entry_is_a_valid_recipe_with_origin_and_scoring(entry_id: str) -> None:
    entry = get_entry(entry_id)
    recipe = Recipe.model_validate(entry.recipe.model_dump())
    assert recipe.origin is not None and recipe.scoring is not None
    assert recipe.origin.license
    links = [recipe.origin.homepage, recipe.origin.paper, recipe.origin.code]
    assert any(link and link.startswith("https://") for link in links)
    info = entry.info()
    assert info.category == recipe.category and info.scoring == recipe.scoring
    if recipe.scoring.kind == "proxy":
        assert "proxy" in (recipe.description or "").lower() or recipe.scoring.approximates


def test_licences_are_stated_as_spec_f_requires() -> None:
    assert "non-commercial" in (get_entry("travelbench").recipe.origin.license or "")  # type: ignore[union-attr]
    for entry_id in ("flex-travelplanner", "traveleval"):
        assert get_entry(entry_id).recipe.origin.license == "none declared"  # type: ignore[union-attr]


def test_an_unknown_benchmark_lists_the_known_ids() -> None:
    with pytest.raises(NotFound) as info:
        get_entry("nope")
    assert "gsm8k" in info.value.message


def test_swebench_images_replace_double_underscores() -> None:
    assert (
        swebench_image("django__django-11099")
        == "swebench/sweb.eval.x86_64.django_1776_django-11099:latest"
    )


def _cases(entry_id: str, path: Path) -> list[dict[str, object]]:
    import orjson

    entry = get_entry(entry_id)
    recipe = entry.recipe
    source = (
        FolderSource(path, id_key=recipe.mapping.id_field)
        if path.is_dir()
        else FileSource(path, json_key=recipe.source.json_key)
    )
    builder = CaseBuilder(recipe.mapping, entry_id, recipe.grader_templates, entry.hook)
    return [orjson.loads(body) for _, body, _ in case_rows(source.rows(), builder)]


def test_gsm8k_expected_is_the_text_after_the_hashes(shared_data: Path) -> None:
    cases = _cases("gsm8k", shared_data / "gsm8k" / "test.jsonl")
    assert len(cases) == 1319
    assert cases[0]["expected"] == "18" and cases[0]["id"] == "gsm8k-0"
    assert any(c["expected"] == "2,125" for c in cases)
    assert cases[0]["gold_fields"] == ["answer"]


def test_swe_bench_rows_become_repo_cases_with_gold(shared_data: Path) -> None:
    cases = _cases("swe-bench-lite", shared_data / "swebench" / "swe-bench-lite-test.json")
    assert len(cases) == 300
    first = cases[0]
    assert first["env"] == {
        "kind": "repo",
        "source": {
            "git": "https://github.com/django/django.git",
            "ref": first["metadata"]["base_commit"],
        },  # type: ignore[index]
        "setup": [],
    }
    assert first["metadata"]["swebench_image"] == swebench_image(str(first["id"]))  # type: ignore[index]
    assert {"patch", "test_patch", "FAIL_TO_PASS", "PASS_TO_PASS", "hints_text"} <= set(
        first["gold_fields"]
    )  # type: ignore[arg-type]
    assert first["metadata"]["version"] == "4.1"  # stays text, never a float  # type: ignore[index]


def test_contextbench_recovers_owner_and_repo(shared_data: Path) -> None:
    path = shared_data / "contextbench" / "contextbench_verified_test.parquet"
    cases = _cases("contextbench-verified", path)
    assert len(cases) == 50
    gits = {c["env"]["source"]["git"] for c in cases}  # type: ignore[index]
    assert all(g.startswith("https://github.com/") and g.count("/") == 4 for g in gits)


def test_trek_impossible_rows_expect_a_reasoned_refusal(shared_data: Path) -> None:
    cases = _cases("trek", shared_data / "trek" / "trek_queries.first50.csv")
    impossible = [c for c in cases if c["metadata"]["impossible"] is True]  # type: ignore[index]
    possible = [c for c in cases if c["metadata"]["impossible"] is False]  # type: ignore[index]
    assert impossible and possible
    assert all("refuses" in str(c["expected"]) for c in impossible)
    assert all(c["expected"] is None for c in possible)
