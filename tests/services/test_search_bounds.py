"""Long search and filter text is 400 naming the parameter, never a database error (SQLite
refused a ``LIKE`` pattern past 50,000 bytes with "LIKE or GLOB pattern too complex", a 500).
The bound lives in the services, so HTTP, MCP, the web pages and the CLI answer alike; SQLite
and PostgreSQL."""

from __future__ import annotations

import pytest

from benchbook.contracts import Dataset
from benchbook.errors import InvalidInput
from benchbook.services import datasets as ds
from benchbook.services import run_views
from benchbook.services.context import Context
from tests.api.conftest import dataset_body

LONG = 60_000
MAX_SEARCH = 512  # services.bounds.MAX_SEARCH (a literal: the test predates it)


@pytest.mark.parametrize("text", ["a" * LONG, "_" * LONG, "a" * (MAX_SEARCH + 1)])
def test_a_dataset_search_past_the_bound_is_refused_naming_search(ctx: Context, text: str) -> None:
    with pytest.raises(InvalidInput, match=f"search: at most {MAX_SEARCH} characters") as caught:
        ds.list_datasets(ctx, search=text)
    assert caught.value.details["errors"][0]["path"] == "search"


def test_a_case_search_past_the_bound_is_refused_naming_q(ctx: Context) -> None:
    ds.register_dataset(ctx, Dataset.model_validate(dataset_body()))
    with pytest.raises(InvalidInput, match=f"q: at most {MAX_SEARCH} characters"):
        ds.search_cases(ctx, "arith", "1.0.0", "a" * LONG)
    assert [m.case.id for m in ds.search_cases(ctx, "arith", "1.0.0", "q" * 1 + "1")] == ["q1"]


@pytest.mark.parametrize("field", ["harness", "dataset"])
def test_a_runs_filter_past_the_bound_is_refused_naming_it(ctx: Context, field: str) -> None:
    with pytest.raises(InvalidInput, match=f"{field}: at most {MAX_SEARCH} characters"):
        run_views.list_runs(ctx, **{field: "a" * LONG})


def test_text_at_the_bound_is_a_search_and_a_harness_filter_has_no_wildcards(
    ctx: Context,
) -> None:
    ds.register_dataset(ctx, Dataset.model_validate(dataset_body()))
    assert ds.list_datasets(ctx, search="a" * MAX_SEARCH).items == []
    assert [d.id for d in ds.list_datasets(ctx, search="rit").items] == ["arith"]
    assert ds.list_datasets(ctx, search="_" * MAX_SEARCH).items == []
    assert run_views.list_runs(ctx, harness="a" * MAX_SEARCH) == []
    assert run_views.list_runs(ctx, harness="%") == []
