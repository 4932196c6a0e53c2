"""Import jobs over HTTP (SPEC E.5) against the local Hugging Face server, on both backends:
``POST /api/imports`` → 202, ``GET /api/imports/{job}``, ``POST /api/imports/{job}/cancel``."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from benchbook.services import imports
from benchbook.services.context import local_admin_context
from benchbook.settings import Settings
from tests.api.conftest import listing, make_client
from tests.api.test_benchmarks import multipart
from tests.hfserver.catalog import GSM8K_ID, PAGED_ID
from tests.hfserver.server import HfServer
from tests.services.test_jobs import held_page, hf_settings

pytestmark = pytest.mark.both_backends

FINISHED = ("succeeded", "failed", "cancelled")
PAGED_RECIPE = {
    "id": "paged",
    "version": "1.2.0",
    "description": "250 rows, 100 per page, one short page",
    "source": {"kind": "huggingface", "dataset": PAGED_ID, "config": "default", "split": "train"},
    "mapping": {"id_field": "id", "task_field": "question", "answer_field": "answer"},
}


@pytest.fixture
def hf_client(engine: Engine, settings: Settings, hf_server: HfServer) -> Iterator[TestClient]:
    """The API with Hugging Face at the local server."""
    yield from make_client(hf_settings(settings, hf_server))


def wait(client: TestClient, job_id: str, timeout_s: float = 60) -> dict[str, Any]:
    """Poll ``GET /api/imports/{job}`` until the job finishes."""
    deadline = time.monotonic() + timeout_s
    while True:
        response = client.get(f"/api/imports/{job_id}")
        assert response.status_code == 200, response.text
        job: dict[str, Any] = response.json()
        if job["state"] in FINISHED or time.monotonic() > deadline:
            return job
        time.sleep(0.05)


def start(client: TestClient, request: dict[str, Any]) -> dict[str, Any]:
    response = client.post("/api/imports", json=request)
    assert response.status_code == 202, response.text
    job: dict[str, Any] = response.json()
    assert job["state"] in ("queued", "running")
    return job


def test_gsm8k_through_the_job_api_matches_the_service_byte_for_byte(
    hf_client: TestClient, engine: Engine, settings: Settings, hf_server: HfServer
) -> None:
    job = wait(hf_client, start(hf_client, {"benchmark": "gsm8k", "version": "1.0.0"})["id"])
    assert job["state"] == "succeeded", job["error"]
    assert job["result"]["cases"] == 1319 and job["result"]["created"] is True
    assert job["progress"] == {
        "rows_read": 1319,
        "cases_built": 1319,
        "total": 1319,
        "fraction": 1.0,
        "notes": [],
    }
    ctx = local_admin_context(engine, hf_settings(settings, hf_server))
    direct = imports.parse_import_request({"benchmark": "gsm8k", "version": "2.0.0"})
    assert imports.import_benchmark(ctx, direct).cases == 1319
    base = "/api/datasets/gsm8k/versions"
    via_job = hf_client.get(f"{base}/1.0.0/cases.jsonl").content
    via_service = hf_client.get(f"{base}/2.0.0/cases.jsonl").content
    assert via_job == via_service and via_job.count(b"\n") == 1319
    source = hf_client.get(f"{base}/1.0.0?limit=1").json()["version"]["produced_by"]["source"]
    assert (source["kind"], source["dataset"], source["config"], source["split"]) == (
        "huggingface",
        GSM8K_ID,
        "main",
        "test",
    )
    assert source["revision"] == hf_server.datasets[GSM8K_ID].sha


def test_a_recipe_import_stamps_via_recipe_with_the_resolved_version(
    hf_client: TestClient,
) -> None:
    for version in ("1.2.0", "1.10.0"):
        response = hf_client.post("/api/recipes", json={**PAGED_RECIPE, "version": version})
        assert response.status_code == 201, response.text
    job = wait(hf_client, start(hf_client, {"recipe": {"id": "paged"}})["id"])
    assert job["state"] == "succeeded", job["error"]
    assert job["request"]["recipe"] == {"id": "paged", "version": "latest"}
    view = hf_client.get("/api/datasets/paged/versions/latest?limit=1").json()
    lineage = view["version"]["produced_by"]
    assert (lineage["via"], lineage["id"], lineage["version"]) == ("recipe", "paged", "1.10.0")
    assert lineage["source"]["dataset"] == PAGED_ID


def test_a_job_whose_viewer_fails_mid_split_says_it_read_the_parquet_export(
    hf_client: TestClient, hf_server: HfServer
) -> None:
    ds = hf_server.datasets[PAGED_ID]
    ds.short_pages = {}
    ds.rows_fail_from, ds.rows_failure = 200, "TooBigContentError"
    job = wait(hf_client, start(hf_client, {"spec": PAGED_RECIPE})["id"])
    assert job["state"] == "succeeded", job["error"]
    assert job["result"]["cases"] == 250
    notes = job["result"]["notes"]
    assert len(notes) == 1 and "row 201 of 250" in notes[0] and "TooBigContentError" in notes[0]
    assert f"Parquet export at commit {ds.sha[:12]}" in notes[0]
    assert job["progress"]["notes"] == notes
    cases = hf_client.get("/api/datasets/paged/versions/1.0.0?limit=1000").json()["cases"]
    assert [c["id"] for c in cases] == [str(100 + i) for i in range(250)]


def test_the_250_row_split_with_a_short_page_imports_each_row_once(
    hf_client: TestClient, hf_server: HfServer
) -> None:
    job = wait(hf_client, start(hf_client, {"spec": PAGED_RECIPE})["id"])
    assert job["state"] == "succeeded", job["error"]
    assert job["result"]["cases"] == 250 and job["progress"]["rows_read"] == 250
    cases = hf_client.get("/api/datasets/paged/versions/1.0.0?limit=1000").json()["cases"]
    assert [c["id"] for c in cases] == [str(100 + i) for i in range(250)]
    assert [int(r.query["offset"]) for r in hf_server.calls("/viewer/rows")] == [0, 100, 160]


def test_cancelling_mid_import_stores_nothing(hf_client: TestClient, hf_server: HfServer) -> None:
    with held_page(hf_server, 1100) as (reached, release):
        job = start(hf_client, {"benchmark": "gsm8k"})
        assert reached.wait(30)
        cancelled = hf_client.post(f"/api/imports/{job['id']}/cancel")
        assert cancelled.status_code == 200 and cancelled.json()["cancel_requested"] is True
        release.set()
        done = wait(hf_client, job["id"])
    assert done["state"] == "cancelled" and done["result"] is None
    assert done["error"]["code"] == "cancelled"
    assert listing(hf_client) == {}


def test_a_failing_import_shows_its_error_envelope_and_stores_nothing(
    hf_client: TestClient,
) -> None:
    missing = {**PAGED_RECIPE, "source": {**PAGED_RECIPE["source"], "dataset": "nobody/nothing"}}
    job = wait(hf_client, start(hf_client, {"spec": missing})["id"])
    assert job["state"] == "failed" and job["result"] is None
    assert job["error"]["code"] == "not_found" and "nobody/nothing" in job["error"]["message"]
    assert set(job["error"]) == {"code", "message", "details"}
    assert listing(hf_client) == {}


def test_a_multipart_upload_runs_as_a_job_and_its_file_is_removed(
    client: TestClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    uploads = tmp_path / "uploads"
    uploads.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(uploads))
    rows = b"".join(
        b'{"question": "What is %d + %d?", "answer": "#### %d"}\n' % (i, i, 2 * i)
        for i in range(40)
    )
    response = client.post("/api/imports", files=multipart({"benchmark": "gsm8k"}, "t.jsonl", rows))
    assert response.status_code == 202, response.text
    job = wait(client, response.json()["id"])
    assert job["state"] == "succeeded" and job["result"]["cases"] == 40
    assert job["file_name"] == "t.jsonl"
    assert list(uploads.iterdir()) == []
    assert [j["id"] for j in client.get("/api/imports").json()] == [job["id"]]


def test_unknown_jobs_and_bad_requests_answer_with_the_envelope(client: TestClient) -> None:
    missing = client.get("/api/imports/imp_nope")
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"
    assert client.post("/api/imports/imp_nope/cancel").status_code == 404
    both = client.post("/api/imports", json={"benchmark": "gsm8k", "recipe": {"id": "x"}})
    assert both.status_code == 400 and both.json()["code"] == "invalid_input"
    assert client.get("/api/imports").json() == []
