"""Origin links are http(s) URLs wherever an Origin is accepted (SPEC A)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from benchbook.contracts import Dataset, Origin, Recipe

LINK_FIELDS = ["homepage", "paper", "code", "data", "leaderboard"]
BAD_LINKS = [
    "javascript:alert(1)",
    " JavaScript:alert(document.cookie)",
    "data:text/html,<script>alert(1)</script>",
    "DATA:text/html;base64,PHNjcmlwdD4=",
    "vbscript:msgbox(1)",
    "ftp://example.org/file",
    "//example.org/no-scheme",
    "example.org",
    "http://",
    "https://",
    "http:///no-host",
    "https://exa mple.org/space-in-host",
]


def _dataset_with_origin(origin: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "d",
        "version": "1.0.0",
        "produced_by": {"via": "catalog", "id": "d", "origin": origin},
    }


def _recipe_with_origin(origin: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "r",
        "origin": origin,
        "source": {"kind": "file", "file": "rows.jsonl"},
        "mapping": {"task_field": "question"},
    }


@pytest.mark.parametrize("field", LINK_FIELDS)
@pytest.mark.parametrize("link", ["https://arxiv.org/abs/2110.14168", "http://a", "HTTPS://X.ORG"])
def test_an_http_link_is_accepted_in_every_origin_link_field(field: str, link: str) -> None:
    assert getattr(Origin.model_validate({field: link}), field) == link


@pytest.mark.parametrize("field", LINK_FIELDS)
@pytest.mark.parametrize("link", BAD_LINKS)
def test_a_non_http_link_is_rejected_in_every_origin_link_field(field: str, link: str) -> None:
    with pytest.raises(ValidationError) as err:
        Origin.model_validate({field: link})
    assert [e["loc"] for e in err.value.errors()] == [(field,)]


@pytest.mark.parametrize("link", ["javascript:alert(1)", "data:text/html,x"])
def test_a_dataset_produced_by_origin_rejects_a_script_link(link: str) -> None:
    with pytest.raises(ValidationError) as err:
        Dataset.model_validate(_dataset_with_origin({"paper": link}))
    assert [e["loc"] for e in err.value.errors()] == [("produced_by", "origin", "paper")]


@pytest.mark.parametrize("link", ["javascript:alert(1)", "data:text/html,x"])
def test_a_recipe_origin_rejects_a_script_link(link: str) -> None:
    with pytest.raises(ValidationError) as err:
        Recipe.model_validate(_recipe_with_origin({"homepage": link}))
    assert [e["loc"] for e in err.value.errors()] == [("origin", "homepage")]


def test_a_dataset_and_a_recipe_accept_an_http_origin() -> None:
    origin = {"homepage": "https://github.com/openai/grade-school-math", "license": "MIT"}
    dataset = Dataset.model_validate(_dataset_with_origin(origin))
    recipe = Recipe.model_validate(_recipe_with_origin(origin))
    assert dataset.produced_by is not None and dataset.produced_by.origin is not None
    assert dataset.produced_by.origin.homepage == origin["homepage"]
    assert recipe.origin is not None and recipe.origin.license == "MIT"


def test_free_text_origin_fields_are_not_treated_as_links() -> None:
    origin = Origin.model_validate({"citation": "javascript: a talk title", "authors": "A, B"})
    assert origin.citation == "javascript: a talk title"
