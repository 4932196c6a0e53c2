"""Recipes through the service (SPEC A Recipe, B, E.6), on SQLite and PostgreSQL."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from benchbook.errors import Conflict, Forbidden, InvalidInput, NotFound
from benchbook.services import datasets as ds
from benchbook.services import imports
from benchbook.services import recipes as svc
from benchbook.services.context import Context
from tests.services.test_accounts import make_team

ROWS = (
    '{"id": "a", "question": "1+1", "answer": "2"}\n{"id": "b", "question": "2+2", "answer": "4"}\n'
)


def body(version: str = "1.0.0", **changes: Any) -> dict[str, Any]:
    """A file recipe ``arith`` reading JSONL rows ``{id, question, answer}``."""
    recipe: dict[str, Any] = {
        "id": "arith",
        "version": version,
        "description": "Sums",
        "source": {"kind": "file", "format": "jsonl"},
        "mapping": {"id_field": "id", "task_template": "Q: {question}", "answer_field": "answer"},
        "origin": {"homepage": "https://example.org/arith", "license": "MIT"},
    }
    recipe.update(changes)
    return recipe


def register(ctx: Context, payload: dict[str, Any], shared: bool = False) -> Any:
    return svc.register_recipe(ctx, svc.parse_recipe(payload), shared)


def test_registering_the_identical_recipe_again_changes_nothing(ctx: Context) -> None:
    first = register(ctx, body())
    spelled_out = body(category="qa", grader_templates=[])  # defaults written out
    reordered = dict(reversed(list(spelled_out.items())))
    again = register(ctx, reordered)
    assert (first.created, again.created) == (True, False)
    assert first.content_hash == again.content_hash and len(first.content_hash) == 64
    assert [s.versions for s in svc.list_recipes(ctx)] == [["1.0.0"]]


def test_different_content_at_the_same_version_is_a_conflict_naming_it(ctx: Context) -> None:
    register(ctx, body())
    with pytest.raises(Conflict, match=r"arith@1\.0\.0"):
        register(ctx, body(description="Sums, changed"))
    assert svc.get_recipe(ctx, "arith", "1.0.0").description == "Sums"


def test_latest_follows_semver_precedence_and_skips_prereleases(ctx: Context) -> None:
    for version in ("1.2.0", "1.10.0", "1.9.0", "2.0.0-rc.1"):
        register(ctx, body(version, description=f"v{version}"))
    assert svc.get_recipe(ctx, "arith").version == "1.10.0"
    assert svc.get_recipe(ctx, "arith", "latest").description == "v1.10.0"
    assert svc.get_recipe(ctx, "arith", "2.0.0-rc.1").version == "2.0.0-rc.1"
    summary = svc.list_recipes(ctx)[0]
    assert summary.latest == "1.10.0"
    assert summary.versions == ["1.2.0", "1.9.0", "1.10.0", "2.0.0-rc.1"]


def test_a_prerelease_is_latest_only_when_no_release_exists(ctx: Context) -> None:
    register(ctx, body("0.1.0-beta.1"))
    assert svc.get_recipe(ctx, "arith").version == "0.1.0-beta.1"


def test_unknown_recipes_and_versions_are_not_found(ctx: Context) -> None:
    with pytest.raises(NotFound, match="nope"):
        svc.get_recipe(ctx, "nope")
    register(ctx, body())
    with pytest.raises(NotFound, match=r"arith@3\.0\.0"):
        svc.get_recipe(ctx, "arith", "3.0.0")
    with pytest.raises(NotFound):
        svc.get_recipe(ctx, "arith", "not-a-version")


def test_a_javascript_origin_link_is_rejected_by_path(ctx: Context) -> None:
    bad = body(origin={"homepage": "javascript:alert(1)"})
    with pytest.raises(InvalidInput) as caught:
        svc.parse_recipe(bad)
    assert caught.value.details["errors"][0]["path"] == "origin.homepage"
    report = svc.validate_recipe(ctx, bad)
    assert not report.ok and report.errors[0].path == "origin.homepage"
    assert svc.list_recipes(ctx) == []


def test_validate_reports_identical_and_conflicting_versions_and_writes_nothing(
    ctx: Context,
) -> None:
    fresh = svc.validate_recipe(ctx, body())
    assert fresh.ok and not fresh.version_exists and svc.list_recipes(ctx) == []
    register(ctx, body())
    same = svc.validate_recipe(ctx, body())
    assert same.ok and same.identical and same.existing_versions == ["1.0.0"]
    other = svc.validate_recipe(ctx, body(description="changed"))
    assert not other.ok and other.would_conflict and other.errors[0].path == "version"
    broken = copy.deepcopy(body())
    del broken["mapping"]["task_template"]
    report = svc.validate_recipe(ctx, broken)
    assert not report.ok and "task_field or task_template" in report.errors[0].message


def test_shared_recipes_show_until_the_workspace_registers_its_own(ctx: Context) -> None:
    team = make_team(ctx)
    register(ctx, body("1.0.0", description="shared"), shared=True)
    assert svc.get_recipe(team.member, "arith").description == "shared"
    listed = svc.list_recipes(team.member)
    assert [(r.id, r.workspace, r.shared) for r in listed] == [("arith", "_shared", True)]
    register(team.member, body("0.5.0", description="own"))
    assert svc.get_recipe(team.member, "arith").description == "own"
    with pytest.raises(NotFound):  # the owner is per id: _shared's 1.0.0 is hidden now
        svc.get_recipe(team.member, "arith", "1.0.0")
    assert [(r.workspace, r.latest) for r in svc.list_recipes(team.member)] == [(team.ws, "0.5.0")]
    assert svc.list_recipes(team.outsider)[0].workspace == "_shared"


def test_roles_gate_recipes(ctx: Context) -> None:
    team = make_team(ctx)
    with pytest.raises(Forbidden):
        register(team.viewer, body())
    with pytest.raises(Forbidden):
        register(team.admin, body(), shared=True)  # workspace admins may not publish shared
    register(team.member, body())
    assert svc.get_recipe(team.viewer, "arith").id == "arith"
    with pytest.raises(NotFound):  # another workspace's recipe does not leak
        svc.get_recipe(team.outsider, "arith")


def test_list_search_matches_id_and_description(ctx: Context) -> None:
    register(ctx, body())
    register(ctx, body(id="words", description="Spelling"))
    assert [r.id for r in svc.list_recipes(ctx, "spell")] == ["words"]
    assert [r.id for r in svc.list_recipes(ctx, "ARI")] == ["arith"]


def _import(ctx: Context, **fields: Any) -> Any:
    request = imports.parse_import_request({"text": ROWS, "format": "jsonl", **fields})
    return imports.import_benchmark(ctx, request)


def test_an_import_from_a_recipe_stamps_the_resolved_recipe_version(ctx: Context) -> None:
    register(ctx, body("1.0.0"))
    register(ctx, body("1.4.0", description="Sums, newer"))
    result = _import(ctx, recipe={"id": "arith"}, bump="minor")
    view = ds.get_dataset(ctx, "arith", result.version)
    lineage = view.version.produced_by
    assert lineage is not None
    assert (lineage.via, lineage.id, lineage.version) == ("recipe", "arith", "1.4.0")
    # the resolved recipe version's description, then what this version holds
    assert view.version.description == "Sums, newer This version: file upload.jsonl."
    assert [c.task for c in view.cases] == ["Q: 1+1", "Q: 2+2"]
    pinned = _import(ctx, recipe={"id": "arith", "version": "1.0.0"}, id="arith-old")
    old = ds.get_dataset(ctx, "arith-old", pinned.version).version.produced_by
    assert old is not None and (old.via, old.version) == ("recipe", "1.0.0")


def test_an_import_from_an_unknown_recipe_is_not_found_and_stores_nothing(ctx: Context) -> None:
    with pytest.raises(NotFound, match="ghost"):
        _import(ctx, recipe={"id": "ghost"})
    assert ds.list_datasets(ctx).items == []


def test_bumps_start_at_1_0_0_and_follow_the_existing_versions(ctx: Context) -> None:
    register(ctx, body())
    first = _import(ctx, recipe={"id": "arith"}, bump="major")
    assert first.version == "1.0.0"
    other_rows = ROWS.replace("2+2", "3+3")
    steps = []
    for bump, rows in (("patch", other_rows), ("minor", ROWS), ("major", other_rows)):
        request = imports.parse_import_request(
            {"recipe": {"id": "arith"}, "bump": bump, "text": rows, "format": "jsonl"}
        )
        steps.append(imports.import_benchmark(ctx, request).version)
    assert steps == ["1.0.1", "1.1.0", "2.0.0"]
    versions = [v.version for v in ds.list_dataset_versions(ctx, "arith")]
    assert sorted(versions) == ["1.0.0", "1.0.1", "1.1.0", "2.0.0"]
