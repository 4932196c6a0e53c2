"""The error envelope ``{code, message, details}``, its statuses; rejected writes store nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from benchbook.settings import Settings
from tests.api.conftest import dataset_body, listing, make_client


def assert_envelope(response: Any, status: int, code: str) -> dict[str, Any]:
    """The response has ``status`` and the envelope with ``code``; returns the body."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"code", "message", "details"}
    assert body["code"] == code
    assert isinstance(body["message"], str) and body["message"]
    return dict(body)


@pytest.fixture
def seeded(client: TestClient) -> TestClient:
    """A registry holding ``arith@1.0.0`` (3 cases)."""
    assert client.post("/api/datasets", json=dataset_body()).status_code == 201
    return client


def test_malformed_json_is_a_400_naming_line_and_column(seeded: TestClient) -> None:
    before = listing(seeded)
    raw = b'{"id": "arith",\n "version": "2.0.0",\n "cases": [}'
    body = assert_envelope(seeded.post("/api/datasets", content=raw), 400, "invalid_input")
    details = body["details"]
    assert (details["line"], details["column"]) == (3, 12)
    assert details["position"] == raw.index(b"}")
    assert "line 3, column 12" in str(body["message"])
    assert listing(seeded) == before


def test_an_empty_body_is_a_400(seeded: TestClient) -> None:
    assert_envelope(seeded.post("/api/datasets", content=b""), 400, "invalid_input")


def test_a_non_semver_version_is_a_400_naming_version(seeded: TestClient) -> None:
    before = listing(seeded)
    response = seeded.post("/api/datasets", json=dataset_body(version="1.0"))
    body = assert_envelope(response, 400, "invalid_input")
    assert "version" in str(body["message"]) and "SemVer" in str(body["message"])
    errors = body["details"]["errors"]
    assert errors[0]["path"] == "version"
    assert listing(seeded) == before


def test_duplicate_case_ids_are_a_409_listing_them(seeded: TestClient) -> None:
    """A rule across cases that no JSON Schema states: 409, not 400 (see api.md)."""
    before = listing(seeded)
    body = dataset_body(version="1.1.0", n=4)
    body["cases"][2]["id"] = "q0"
    body["cases"][3]["id"] = "q1"
    error = assert_envelope(seeded.post("/api/datasets", json=body), 409, "conflict")
    assert "q0, q1" in str(error["message"])
    assert listing(seeded) == before


def test_a_javascript_origin_link_is_a_400_naming_the_field(seeded: TestClient) -> None:
    before = listing(seeded)
    produced_by = {
        "via": "spec",
        "id": "arith",
        "origin": {"homepage": "javascript:alert(1)"},
    }
    body = dataset_body(version="1.1.0", produced_by=produced_by)
    error = assert_envelope(seeded.post("/api/datasets", json=body), 400, "invalid_input")
    paths = [e["path"] for e in error["details"]["errors"]]
    assert "produced_by.origin.homepage" in paths
    assert "http(s)" in str(error["message"])
    assert listing(seeded) == before


def test_a_body_that_is_not_an_object_is_a_400(seeded: TestClient) -> None:
    assert_envelope(seeded.post("/api/datasets", json=[1, 2]), 400, "invalid_input")
    assert_envelope(seeded.post("/api/datasets/validate", json="x"), 400, "invalid_input")


def test_different_content_for_a_stored_version_is_a_409_naming_it(seeded: TestClient) -> None:
    before = listing(seeded)
    response = seeded.post("/api/datasets", json=dataset_body(answer_offset=7))
    body = assert_envelope(response, 409, "conflict")
    assert "arith@1.0.0" in str(body["message"])
    assert body["details"] == {
        "id": "arith",
        "version": "1.0.0",
        "cases": {"added": 0, "removed": 0, "changed": 3},
        "meta": [],
    }
    assert "3 cases differ (3 changed)" in str(body["message"])
    assert listing(seeded) == before
    cases = seeded.get("/api/datasets/arith/versions/1.0.0").json()["cases"]
    assert [c["expected"] for c in cases] == ["0", "1", "2"]


def test_unknown_datasets_versions_and_tags_are_404(seeded: TestClient) -> None:
    assert_envelope(seeded.get("/api/datasets/nope/versions"), 404, "not_found")
    assert_envelope(seeded.get("/api/datasets/nope/versions/latest"), 404, "not_found")
    missing = assert_envelope(seeded.get("/api/datasets/arith/versions/9.9.9"), 404, "not_found")
    assert "arith@9.9.9" in str(missing["message"])
    assert_envelope(seeded.get("/api/datasets/arith/versions/no-such-tag"), 404, "not_found")
    assert_envelope(seeded.get("/api/datasets/arith/versions/9.9.9/cases.jsonl"), 404, "not_found")
    assert_envelope(seeded.get("/api/datasets/arith/diff?base=9.9.9"), 404, "not_found")
    assert_envelope(seeded.get("/api/datasets/nope/activity"), 404, "not_found")


def test_unknown_routes_and_methods_use_the_envelope(client: TestClient) -> None:
    body = assert_envelope(client.get("/api/no/such/route"), 404, "not_found")
    assert "/api/no/such/route" in str(body["message"])
    assert_envelope(client.patch("/api/datasets"), 405, "method_not_allowed")


def test_a_405_names_the_allowed_methods_in_allow(client: TestClient) -> None:
    """RFC 9110 §15.5.6: a 405 MUST carry ``Allow`` (found by schemathesis, issue 9 item 11)."""
    wrong = client.patch("/api/datasets")
    assert wrong.status_code == 405
    assert {"GET", "POST"} <= {m.strip() for m in wrong.headers["Allow"].split(",")}
    assert client.delete("/api/health").headers["Allow"] == "GET"


def test_a_literal_path_segment_wins_over_a_parameter_for_every_method(
    client: TestClient,
) -> None:
    """``/api/benchmarks/import`` is its own resource (POST only), not the benchmark ``import``:
    its 405 allows exactly what the OpenAPI document lists there (found by schemathesis)."""
    for method in ("GET", "OPTIONS", "DELETE"):
        wrong = client.request(method, "/api/benchmarks/import")
        assert_envelope(wrong, 405, "method_not_allowed")
        assert wrong.headers["Allow"] == "POST"
    assert client.request("OPTIONS", "/api/datasets/validate").headers["Allow"] == "POST"
    document = client.get("/api/openapi.json").json()
    (param,) = document["paths"]["/api/benchmarks/{benchmark}"]["get"]["parameters"]
    assert set(param["schema"]["not"]["enum"]) == {"import", "preview"}
    assert client.get("/api/benchmarks/mmlu").status_code in (200, 404)  # still a lookup
    versions = document["paths"]["/api/datasets/{dataset_id}/versions/{ref}"]
    assert {"get", "delete"} <= set(versions)


def test_bad_query_parameters_are_400_with_paths(client: TestClient) -> None:
    body = assert_envelope(client.get("/api/datasets?limit=0&sort=size"), 400, "invalid_input")
    paths = sorted(e["path"] for e in body["details"]["errors"])
    assert paths == ["query.limit", "query.sort"]
    assert_envelope(client.get("/api/datasets/x/diff"), 400, "invalid_input")
    assert_envelope(client.get("/api/datasets/x/versions/latest?after=abc"), 400, "invalid_input")


def test_deletes_and_tag_writes_refuse_latest_and_tags(seeded: TestClient) -> None:
    seeded.put("/api/datasets/arith/versions/1.0.0/tags", json={"tags": ["prod"]})
    assert_envelope(seeded.delete("/api/datasets/arith/versions/latest"), 404, "not_found")
    assert_envelope(seeded.delete("/api/datasets/arith/versions/prod"), 404, "not_found")
    response = seeded.put("/api/datasets/arith/versions/latest/tags", json={"tags": ["x"]})
    assert_envelope(response, 404, "not_found")
    assert [v["version"] for v in seeded.get("/api/datasets/arith/versions").json()] == ["1.0.0"]


def test_invalid_tags_are_400_and_leave_tags_unchanged(seeded: TestClient) -> None:
    url = "/api/datasets/arith/versions/1.0.0/tags"
    seeded.put(url, json={"tags": ["prod"]})
    for bad in (["latest"], ["2.0.0"], ["x" * 61], [f"t{i}" for i in range(21)]):
        assert_envelope(seeded.put(url, json={"tags": bad}), 400, "invalid_input")
    assert_envelope(seeded.put(url, json={"tag": "prod"}), 400, "invalid_input")
    versions = seeded.get("/api/datasets/arith/versions").json()
    assert versions[0]["version_tags"] == ["prod"]


def test_bulk_delete_with_one_missing_version_is_404_and_deletes_nothing(
    seeded: TestClient,
) -> None:
    seeded.post("/api/datasets", json=dataset_body(version="1.1.0"))
    before = listing(seeded)
    response = seeded.request(
        "DELETE", "/api/datasets/arith", json={"versions": ["1.0.0", "1.1.0", "3.0.0"]}
    )
    body = assert_envelope(response, 404, "not_found")
    assert "arith@3.0.0" in str(body["message"])
    assert listing(seeded) == before


def test_bulk_delete_rejects_an_empty_list_and_joins_versions_given_twice(
    seeded: TestClient,
) -> None:
    """Body and query versions together name all of them (a rule across two parts of a request
    cannot be stated in OpenAPI, so the API does not make one; found by schemathesis)."""
    before = listing(seeded)
    empty = seeded.request("DELETE", "/api/datasets/arith", json={"versions": []})
    assert_envelope(empty, 400, "invalid_input")
    assert listing(seeded) == before
    twice = seeded.request(
        "DELETE", "/api/datasets/arith?versions=1.0.0", json={"versions": ["1.0.0"]}
    )
    assert twice.status_code == 200, twice.text
    assert twice.json()["deleted"] == ["1.0.0"]


@pytest.fixture
def small_limit_client(engine: Engine, settings: Settings, tmp_path: Path) -> Iterator[TestClient]:
    """The API with ``max_upload_bytes`` of 2 KiB."""
    yield from make_client(settings.model_copy(update={"max_upload_bytes": 2048}))


def test_a_body_over_max_upload_bytes_is_413_and_stores_nothing(
    small_limit_client: TestClient,
) -> None:
    client = small_limit_client
    assert client.post("/api/datasets", json=dataset_body(n=5)).status_code == 201
    before = listing(client)
    big = orjson.dumps(dataset_body(version="2.0.0", n=100))
    assert len(big) > 2048
    body = assert_envelope(client.post("/api/datasets", content=big), 413, "payload_too_large")
    assert body["details"] == {"max_upload_bytes": 2048, "size_bytes": len(big)}
    assert "2048" in str(body["message"])
    chunked = iter([big[i : i + 512] for i in range(0, len(big), 512)])
    streamed = client.post("/api/datasets", content=chunked)
    assert_envelope(streamed, 413, "payload_too_large")
    validate = client.post("/api/datasets/validate", content=big)
    assert_envelope(validate, 413, "payload_too_large")
    assert listing(client) == before


BIG = 2**64
INT64_MAX = 2**63 - 1


@pytest.mark.parametrize(
    ("method", "path", "parameter"),
    [
        ("GET", f"/api/datasets/arith/versions/latest?after={INT64_MAX}", "after"),
        ("GET", f"/api/datasets/arith/versions/latest?after={BIG}", "after"),
        ("GET", "/api/datasets/arith/versions/latest?after=-1", "after"),
        ("GET", f"/api/datasets/arith/activity?before={BIG}", "before"),
        ("GET", "/api/datasets/arith/activity?before=-3", "before"),
        ("GET", f"/api/datasets?offset={BIG}", "offset"),
        ("DELETE", f"/api/comments/{BIG}", "comment_id"),
    ],
)
def test_cursors_offsets_and_ids_out_of_range_are_400_naming_the_parameter(
    seeded: TestClient, method: str, path: str, parameter: str
) -> None:
    body = assert_envelope(seeded.request(method, path), 400, "invalid_input")
    assert parameter in str(body["message"])
    assert [e["path"] for e in body["details"]["errors"]] == [parameter]


def test_a_parent_id_beyond_64_bits_is_400_naming_parent_id(seeded: TestClient) -> None:
    payload = {"resource_type": "dataset", "resource_id": "arith", "body": "hi", "parent_id": BIG}
    body = assert_envelope(seeded.post("/api/comments", json=payload), 400, "invalid_input")
    assert [e["path"] for e in body["details"]["errors"]] == ["parent_id"]


@pytest.mark.parametrize("escape", ["\\u0000", "\\ud800"])
def test_nul_bytes_and_lone_surrogates_in_string_fields_are_400_not_500(
    seeded: TestClient, escape: str
) -> None:
    bad = f'"x{escape}y@example.org"'
    bodies = {
        "/api/login": f'{{"email": {bad}, "password": "whatever-pass"}}',
        "/api/members": f'{{"user": {bad}}}',
        "/api/comments": f'{{"resource_type": "dataset", "resource_id": "arith", "body": {bad}}}',
        "/api/keys": f'{{"name": {bad}}}',
    }
    for path, raw in bodies.items():
        response = seeded.post(path, content=raw, headers={"content-type": "application/json"})
        body = assert_envelope(response, 400, "invalid_input")
        assert "NUL" in str(body["message"]) or "surrogate" in str(body["message"]), path
    dataset = f'{{"id": "t", "version": "1.0.0", "description": {bad}, "cases": []}}'
    assert_envelope(seeded.post("/api/datasets", content=dataset), 400, "invalid_input")
    for path in ("/api/datasets/a%00b/versions", "/api/datasets?search=a%00b"):
        assert_envelope(seeded.get(path), 400, "invalid_input")
