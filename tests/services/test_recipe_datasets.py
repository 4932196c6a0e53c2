"""The datasets produced from a recipe (``services.recipes.list_recipe_datasets``, shown on the
recipe page), on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from benchbook.services import datasets as ds
from benchbook.services import imports
from benchbook.services import recipes as svc
from benchbook.services.context import Context
from tests.services.test_accounts import make_team
from tests.services.test_recipes import ROWS, body, register


def _import(ctx: Context, **fields: Any) -> Any:
    request = imports.parse_import_request({"text": ROWS, "format": "jsonl", **fields})
    return imports.import_benchmark(ctx, request)


def _made(ctx: Context, recipe_id: str) -> list[tuple[str, str, str | None]]:
    found = svc.list_recipe_datasets(ctx, recipe_id)
    return [(v.id, v.version, v.produced_by.version if v.produced_by else None) for v in found]


def test_only_versions_imported_from_the_recipe_are_listed_newest_first(ctx: Context) -> None:
    register(ctx, body("1.0.0"))
    register(ctx, body("1.4.0"))
    register(ctx, body("1.0.0", id="other"))
    _import(ctx, recipe={"id": "arith", "version": "1.0.0"}, id="arith-old")
    _import(ctx, recipe={"id": "arith"})
    _import(ctx, recipe={"id": "other"}, id="from-other")
    _import(ctx, spec=body("1.0.0"), id="arith-inline")  # via spec, same id: not from the recipe
    ds.register_dataset(
        ctx,
        ds.parse_dataset(
            {
                "id": "arith-typed",
                "version": "1.0.0",
                "cases": [{"id": "x", "env": {"kind": "prompt"}, "task": "t"}],
            }
        ),
    )
    assert _made(ctx, "arith") == [("arith", "1.0.0", "1.4.0"), ("arith-old", "1.0.0", "1.0.0")]
    assert _made(ctx, "other") == [("from-other", "1.0.0", "1.0.0")]
    assert _made(ctx, "ghost") == []
    listed = svc.list_recipe_datasets(ctx, "arith")[0]
    assert (listed.cases, listed.is_latest, listed.workspace) == (2, True, ctx.workspace)


def test_a_deleted_version_leaves_the_list_and_tags_are_shown(ctx: Context) -> None:
    register(ctx, body("1.0.0"))
    _import(ctx, recipe={"id": "arith"})
    _import(ctx, recipe={"id": "arith"}, bump="minor", text=ROWS.replace("2+2", "5+5"))
    ds.set_dataset_version_tags(ctx, "arith", "1.0.0", ["frozen"])
    made = svc.list_recipe_datasets(ctx, "arith")
    assert [(v.version, v.version_tags, v.is_latest) for v in made] == [
        ("1.1.0", [], True),
        ("1.0.0", ["frozen"], False),
    ]
    ds.delete_dataset_version(ctx, "arith", "1.1.0")
    assert _made(ctx, "arith") == [("arith", "1.0.0", "1.0.0")]


def test_other_workspaces_imports_stay_hidden_and_shared_ones_show_through(
    ctx: Context,
) -> None:
    team = make_team(ctx)
    register(ctx, body("1.0.0"), shared=True)
    _import(team.outsider, recipe={"id": "arith"})  # the outsider's own workspace
    assert [v.workspace for v in svc.list_recipe_datasets(team.outsider, "arith")] == [team.other]
    assert svc.list_recipe_datasets(team.member, "arith") == []
    _import(ctx, recipe={"id": "arith"}, id="arith-shared", shared=True)
    seen = svc.list_recipe_datasets(team.viewer, "arith")
    assert [(v.id, v.workspace) for v in seen] == [("arith-shared", "_shared")]
    _import(team.member, recipe={"id": "arith"}, id="arith-shared")  # own id shadows _shared
    assert [v.workspace for v in svc.list_recipe_datasets(team.member, "arith")] == [team.ws]
