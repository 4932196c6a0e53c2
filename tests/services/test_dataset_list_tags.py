"""Issue 14 item 11: the datasets list carries each dataset's version tags, and its search
finds version tags and the tags of the latest version's cases, on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from benchbook.contracts import Dataset
from benchbook.services import datasets as svc
from benchbook.services.context import Context


def _register(ctx: Context, dataset_id: str, version: str, cases: list[dict[str, Any]]) -> None:
    body = {"id": dataset_id, "version": version, "cases": cases}
    svc.register_dataset(ctx, Dataset.model_validate(body))


def _case(case_id: str, task: str, tags: list[str] | None = None) -> dict[str, Any]:
    return {"id": case_id, "env": {"kind": "prompt"}, "task": task, "tags": tags or []}


def _found(ctx: Context, search: str) -> list[str]:
    return [s.id for s in svc.list_datasets(ctx, search=search).items]


def test_the_list_maps_each_version_tag_to_its_version(ctx: Context) -> None:
    _register(ctx, "capitals", "1.0.0", [_case("q1", "Capital of France?")])
    _register(ctx, "capitals", "1.1.0", [_case("q1", "Capital of Spain?")])
    svc.set_dataset_version_tags(ctx, "capitals", "1.0.0", ["baseline", "paper"])
    svc.set_dataset_version_tags(ctx, "capitals", "1.1.0", ["prod"])
    (item,) = svc.list_datasets(ctx).items
    assert item.version_tags == {"baseline": "1.0.0", "paper": "1.0.0", "prod": "1.1.0"}


def test_search_finds_a_version_tag_and_a_case_tag_of_the_latest_version(ctx: Context) -> None:
    _register(ctx, "capitals", "1.0.0", [_case("q1", "Capital?", ["Europe", "old-region"])])
    _register(ctx, "capitals", "1.1.0", [_case("q1", "Capital?", ["Europe"])])
    _register(ctx, "trips", "1.0.0", [_case("t1", "Plan a europe trip", ["travel"])])
    _register(ctx, "sums", "1.0.0", [_case("s1", "2+2?", ["arithmetic"])])
    svc.set_dataset_version_tags(ctx, "sums", "1.0.0", ["Baseline"])
    assert _found(ctx, "baseline") == ["sums"]
    assert _found(ctx, "EURO") == ["capitals"]  # a task's text is not a tag
    assert _found(ctx, "travel") == ["trips"]
    assert _found(ctx, "old-region") == []  # only the latest version's cases count
    assert _found(ctx, "%") == [] and _found(ctx, "_") == []  # wildcards are literal
    assert svc.list_datasets(ctx, search="europe").total == 1
