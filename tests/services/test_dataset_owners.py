"""The owner-first ``_shared`` rule, written once (``store.dataset_owners``), and what the
datasets list costs (issue 15 item 5), on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import Engine, event

from benchbook.contracts import Dataset
from benchbook.services import datasets as svc
from benchbook.services import recipes
from benchbook.services.context import Context
from benchbook.store import datasets as repo


def _dataset(dataset_id: str, version: str, task: str = "t", recipe: str | None = None) -> Any:
    made = {"via": "recipe", "id": recipe, "version": "1.0.0"} if recipe else None
    case = {"id": "c", "env": {"kind": "prompt"}, "task": task}
    payload = {"id": dataset_id, "version": version, "cases": [case], "produced_by": made}
    return Dataset.model_validate(payload)


def _views(ctx: Context) -> dict[str, Any]:
    """What the list, the recipe page and resolution each say about id ``ds``."""
    listed = [(s.id, s.workspace, s.latest) for s in svc.list_datasets(ctx).items]
    made = [(v.id, v.workspace, v.version) for v in recipes.list_recipe_datasets(ctx, "r")]
    got = svc.get_dataset(ctx, "ds").version
    return {"list": listed, "recipe": made, "resolved": (got.id, got.workspace, got.version)}


def test_a_shadowed_shared_id_is_listed_once_as_the_workspaces_and_all_readers_agree(
    ctx: Context,
) -> None:
    for version in ("1.0.0", "2.0.0"):
        svc.register_dataset(ctx, _dataset("ds", version, recipe="r"), shared=True)
    svc.register_dataset(ctx, _dataset("ds", "0.1.0", task="own", recipe="r"))
    assert _views(ctx) == {
        "list": [("ds", "default", "0.1.0")],
        "recipe": [("ds", "default", "0.1.0")],
        "resolved": ("ds", "default", "0.1.0"),
    }
    page = svc.list_datasets(ctx)
    assert (page.total, page.total_versions) == (1, 1)
    svc.delete_dataset_versions(ctx, "ds")  # the shared id shows through again
    assert _views(ctx) == {
        "list": [("ds", "_shared", "2.0.0")],
        "recipe": [("ds", "_shared", "2.0.0"), ("ds", "_shared", "1.0.0")],
        "resolved": ("ds", "_shared", "2.0.0"),
    }
    svc.register_dataset(ctx, _dataset("ds", "0.1.0", task="own", recipe="r"))  # revived
    assert _views(ctx)["list"] == [("ds", "default", "0.1.0")]


def test_the_latest_is_the_highest_release_and_follows_deletes(ctx: Context) -> None:
    for version in ("1.9.0", "1.10.0", "2.0.0-rc.1"):
        svc.register_dataset(ctx, _dataset("ds", version))
    summary = svc.list_datasets(ctx).items[0]
    assert (summary.latest, summary.versions) == ("1.10.0", 3)
    svc.delete_dataset_versions(ctx, "ds", ["1.9.0", "1.10.0"])
    summary = svc.list_datasets(ctx).items[0]
    assert (summary.latest, summary.versions) == ("2.0.0-rc.1", 1)


def test_search_is_case_insensitive_beyond_ascii_and_matches_one_tag_at_a_time(
    ctx: Context,
) -> None:
    payload = {"id": "fr", "version": "1.0.0", "description": "Évaluation", "tags": ["a", "b"]}
    svc.register_dataset(ctx, Dataset.model_validate(payload))
    assert [s.id for s in svc.list_datasets(ctx, search="éVAL").items] == ["fr"]
    assert [s.id for s in svc.list_datasets(ctx, search="B").items] == ["fr"]
    assert svc.list_datasets(ctx, search='a","b').total == 0  # never across two tags
    assert svc.list_datasets(ctx, search="%").total == 0  # LIKE wildcards are literal


def test_search_follows_the_latest_description_and_the_live_version_tags(ctx: Context) -> None:
    """The folded search text kept on the id's head row follows every write that changes it."""

    def found(needle: str) -> list[str]:
        return [s.id for s in svc.list_datasets(ctx, search=needle).items]

    svc.register_dataset(ctx, _dataset("ds", "1.0.0"))
    svc.register_dataset(ctx, _dataset("ds", "1.1.0"))
    svc.set_dataset_version_tags(ctx, "ds", "1.0.0", ["Golden"])
    assert found("gOLD") == ["ds"]
    svc.set_dataset_version_tags(ctx, "ds", "1.1.0", ["Golden"])  # moves to the sibling
    assert found("golden") == ["ds"]
    svc.set_dataset_version_tags(ctx, "ds", "1.1.0", [])
    assert found("golden") == []
    svc.set_dataset_version_tags(ctx, "ds", "1.0.0", ["kept"])
    payload = {"id": "ds", "version": "2.0.0", "description": "Fresh", "cases": []}
    svc.register_dataset(ctx, Dataset.model_validate(payload))
    assert found("fresh") == found("kept") == ["ds"]
    svc.delete_dataset_versions(ctx, "ds", ["2.0.0", "1.0.0"])  # its tag goes with it
    assert found("fresh") == found("kept") == []
    assert found("ds") == ["ds"]


def test_a_needle_holding_the_field_separator_never_matches_across_fields(
    ctx: Context,
) -> None:
    payload = {"id": "ab", "version": "1.0.0", "description": "cd", "tags": ["ef"]}
    svc.register_dataset(ctx, Dataset.model_validate(payload))
    for needle in ("ab\x1fcd", "b\x1fc", "cd\x1fef"):
        assert svc.list_datasets(ctx, search=needle).total == 0, needle
    assert svc.list_datasets(ctx, search="cd").total == 1


def test_a_page_beyond_the_end_keeps_the_totals(ctx: Context) -> None:
    for name in ("a", "b"):
        svc.register_dataset(ctx, _dataset(name, "1.0.0"))
    page = svc.list_datasets(ctx, limit=5, offset=10)
    assert (page.items, page.total, page.total_cases, page.total_versions) == ([], 2, 2, 2)


def _seed(ctx: Context, n: int, start: int = 0) -> None:
    for i in range(start, n):
        for version in ("1.0.0", "1.1.0"):
            svc.register_dataset(ctx, _dataset(f"ds{i:03d}", version, recipe="r"))


def _statements(engine: Engine) -> Iterator[list[str]]:
    seen: list[str] = []

    def count(*args: Any) -> None:
        seen.append(args[2])

    event.listen(engine, "before_cursor_execute", count)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", count)


def test_a_datasets_page_is_one_statement_and_reads_only_its_rows(
    ctx: Context, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Statements and version rows built per page do not grow with the number of datasets."""
    built: list[int] = []
    real = repo.VersionRow

    class Counted(real):  # type: ignore[valid-type,misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            built.append(self.pk)

    monkeypatch.setattr(repo, "VersionRow", Counted)
    costs = []
    for n in (3, 30):
        _seed(ctx, n, start=len(costs) and 3)
        built.clear()
        for seen in _statements(engine):
            page = svc.list_datasets(ctx, limit=2, sort="updated")
            costs.append((len(seen), len(built)))
        assert page.total == n and page.total_versions == 2 * n
    assert costs == [(1, 2), (1, 2)]


def test_the_recipe_page_reads_its_datasets_tags_in_one_statement(
    ctx: Context, engine: Engine
) -> None:
    counts = []
    for n in (2, 12):
        _seed(ctx, n, start=len(counts) and 2)
        for seen in _statements(engine):
            assert len(recipes.list_recipe_datasets(ctx, "r")) == 2 * n
            counts.append(len(seen))
    assert counts[0] == counts[1] == 2
