"""Hugging Face browsing routes (SPEC D) against the local Hub and viewer, on both backends:
``GET /api/benchmarks/hf/search|splits|files`` with the token resolved requester first."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from benchbook.services.context import local_admin_context
from benchbook.services.secrets import set_secret
from benchbook.settings import Settings
from tests.api.conftest import make_client
from tests.hfserver.catalog import GATED_ID, GATED_TOKEN, GSM8K_ID, PAGED_ID
from tests.hfserver.server import HfServer
from tests.services.test_jobs import hf_settings

HF = "/api/benchmarks/hf"


@pytest.fixture
def hf_client(engine: Engine, settings: Settings, hf_server: HfServer) -> Iterator[TestClient]:
    """The API with Hugging Face at the local server."""
    yield from make_client(hf_settings(settings, hf_server))


def test_search_finds_datasets_by_id(hf_client: TestClient, hf_server: HfServer) -> None:
    hits = hf_client.get(f"{HF}/search", params={"q": "gsm8k"}).json()
    assert [h["id"] for h in hits] == [GSM8K_ID]
    gated = hf_client.get(f"{HF}/search", params={"q": "gated"}).json()
    assert [(h["id"], h["gated"]) for h in gated] == [(GATED_ID, "auto")]
    assert hf_server.calls("/api/datasets")[-1].query["search"] == "gated"


def test_splits_lists_configs_and_splits(hf_client: TestClient) -> None:
    splits = hf_client.get(f"{HF}/splits", params={"dataset": PAGED_ID}).json()
    assert splits == [
        {"config": "default", "split": "train"},
        {"config": "default", "split": "test"},
    ]
    missing = hf_client.get(f"{HF}/splits", params={"dataset": "nobody/nothing"})
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"
    bad = hf_client.get(f"{HF}/splits", params={"dataset": "a/b/c"})
    assert bad.status_code == 400 and bad.json()["code"] == "invalid_input"


def test_files_are_listed_root_first_at_the_resolved_commit(
    hf_client: TestClient, hf_server: HfServer
) -> None:
    gsm = hf_client.get(f"{HF}/files", params={"dataset": GSM8K_ID}).json()
    assert gsm["revision"] == hf_server.datasets[GSM8K_ID].sha
    assert next(f["path"] for f in gsm["files"]) == "README.md"
    # Like the Hub, a gated repository's file tree is public; its downloads are not.
    gated = hf_client.get(f"{HF}/files", params={"dataset": GATED_ID}).json()
    assert [(f["path"], f["format"]) for f in gated["files"]][-1] == ("data/validation.csv", "csv")


def test_a_gated_dataset_needs_the_requesters_token_then_lists(
    hf_client: TestClient, engine: Engine, settings: Settings, hf_server: HfServer
) -> None:
    refused = hf_client.get(f"{HF}/splits", params={"dataset": GATED_ID})
    assert refused.status_code == 502 and refused.json()["code"] == "upstream_error"
    assert "HF_TOKEN" in refused.json()["message"]
    ctx = local_admin_context(engine, hf_settings(settings, hf_server))
    set_secret(ctx, "HF_TOKEN", "hf_wrong_workspace_token", scope="workspace")
    set_secret(ctx, "HF_TOKEN", GATED_TOKEN, scope="user")  # the requester's own wins
    splits = hf_client.get(f"{HF}/splits", params={"dataset": GATED_ID})
    assert splits.status_code == 200, splits.text
    assert splits.json() == [{"config": "default", "split": "validation"}]
    files = hf_client.get(f"{HF}/files", params={"dataset": GATED_ID}).json()
    assert "data/validation.csv" in [f["path"] for f in files["files"]]
    sent = {r.authorization for r in hf_server.calls("/viewer/splits")}
    assert f"Bearer {GATED_TOKEN}" in sent


def test_the_routes_are_read_operations_of_the_catalog_area(hf_client: TestClient) -> None:
    schema = hf_client.get("/api/openapi.json").json()["paths"]
    assert schema[f"{HF}/search"]["get"]["operationId"] == "search_hf_datasets"
    assert schema[f"{HF}/splits"]["get"]["operationId"] == "list_hf_splits"
    assert schema[f"{HF}/files"]["get"]["operationId"] == "list_hf_files"


@pytest.mark.parametrize(
    "dataset",
    ["openai/gsm8k@main", "../../api/whoami", "openai/..", "openai/gsm8k/../x", "a b/c", "x/-y"],
)
def test_a_dataset_id_the_hub_never_uses_is_400_before_any_request_carries_a_token(
    hf_client: TestClient, hf_server: HfServer, dataset: str
) -> None:
    before = len(hf_server.requests)
    for path in (f"{HF}/splits", f"{HF}/files"):
        response = hf_client.get(path, params={"dataset": dataset})
        assert response.status_code == 400, (path, response.text)
        assert response.json()["details"]["errors"][0]["path"] == "dataset"
    spec = {
        "id": "hf-odd",
        "source": {"kind": "huggingface", "dataset": dataset, "split": "test"},
        "mapping": {"id_field": "id", "task_field": "q", "answer_field": "a"},
    }
    preview = hf_client.post("/api/benchmarks/preview", json={"spec": spec})
    assert preview.status_code == 400, preview.text
    assert "source.dataset" in preview.text
    assert len(hf_server.requests) == before
