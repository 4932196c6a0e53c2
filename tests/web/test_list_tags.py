"""Issue 14 item 11 on the page: the datasets list's Tags column shows the dataset's tags and
its version tags (each linking to the version it names); the search box finds case tags."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from benchbook.app import create_app
from benchbook.services import accounts, datasets
from benchbook.services.context import Context
from benchbook.settings import Settings
from tests.web.test_forms import PASSWORD, _log_in


@pytest.fixture
def client(engine: Engine, settings: Settings, ctx: Context) -> Iterator[TestClient]:
    """Ada (viewer) and two datasets: ``capitals`` (version tag ``baseline`` on 1.0.0, case
    tag ``europe``) and ``sums`` (no tags at all)."""
    accounts.create_user(ctx, "ada@example.org", "Ada", PASSWORD)
    accounts.add_member(ctx, "ada@example.org", "viewer")
    case = {"id": "q1", "env": {"kind": "prompt"}, "task": "Capital of France?"}
    for version in ("1.0.0", "1.1.0"):
        body = {"id": "capitals", "version": version, "cases": [{**case, "tags": ["europe"]}]}
        datasets.register_dataset(ctx, datasets.parse_dataset(body))
    datasets.set_dataset_version_tags(ctx, "capitals", "1.0.0", ["baseline"])
    sums = {"id": "sums", "version": "1.0.0", "cases": [{**case, "id": "s1"}]}
    datasets.register_dataset(ctx, datasets.parse_dataset(sums))
    with TestClient(create_app(settings, engine), follow_redirects=False) as http:
        _log_in(http, "ada@example.org")
        yield http


def _tags_cells(page: str) -> list[str]:
    cells = re.findall(r'<td data-col="tags">(.*?)</td>', page, re.S)
    return [re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", c)).strip() for c in cells]


def test_the_tags_column_shows_version_tags_with_their_version(client: TestClient) -> None:
    page = client.get("/datasets").text
    assert _tags_cells(page) == ["baseline → 1.0.0", "—"]
    assert 'href="/datasets/capitals?v=baseline"' in page


def test_the_list_search_finds_a_case_tag_and_a_version_tag(client: TestClient) -> None:
    assert _tags_cells(client.get("/datasets?q=europe").text) == ["baseline → 1.0.0"]
    assert _tags_cells(client.get("/datasets?q=BASELINE").text) == ["baseline → 1.0.0"]
    assert "No dataset matches" in client.get("/datasets?q=france").text
