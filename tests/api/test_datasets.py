"""Dataset routes, happy paths, on SQLite and PostgreSQL (SPEC B, D)."""

from __future__ import annotations

import orjson
from fastapi.testclient import TestClient

from tests.api.conftest import dataset_body


def test_health_reports_the_version_and_the_database_backend(
    client: TestClient, backend: str
) -> None:
    body = client.get("/api/health").json()
    assert body["status"] == "ok"
    assert body["version"]
    assert body["database"] == backend


def test_openapi_and_docs_are_served_under_api(client: TestClient) -> None:
    schema = client.get("/api/openapi.json").json()
    register = schema["paths"]["/api/datasets"]["post"]
    assert register["operationId"] == "register_dataset"
    body_schema = register["requestBody"]["content"]["application/json"]["schema"]
    assert body_schema == {"$ref": "#/components/schemas/Dataset"}
    assert "Dataset" in schema["components"]["schemas"]
    assert "422" not in register["responses"]
    assert client.get("/api/docs").status_code == 200


def test_registering_answers_201_then_200_unchanged(client: TestClient) -> None:
    first = client.post("/api/datasets", json=dataset_body())
    assert first.status_code == 201
    assert first.json() | {"content_hash": ""} == {
        "workspace": "default",
        "id": "arith",
        "version": "1.0.0",
        "created": True,
        "revived": False,
        "cases": 3,
        "content_hash": "",
    }
    again = client.post("/api/datasets", json=dataset_body())
    assert again.status_code == 200
    assert again.json()["created"] is False
    assert again.json()["content_hash"] == first.json()["content_hash"]


def test_a_raw_body_without_content_type_is_still_parsed_as_json(client: TestClient) -> None:
    response = client.post("/api/datasets", content=orjson.dumps(dataset_body()))
    assert response.status_code == 201


def test_a_chunked_body_without_content_length_is_accepted(client: TestClient) -> None:
    raw = orjson.dumps(dataset_body(n=50))
    chunks = iter([raw[i : i + 100] for i in range(0, len(raw), 100)])
    response = client.post("/api/datasets", content=chunks)
    assert response.status_code == 201, response.text
    assert response.json()["cases"] == 50


def test_getting_latest_returns_the_version_and_its_cases(client: TestClient) -> None:
    client.post("/api/datasets", json=dataset_body(version="1.2.0"))
    client.post("/api/datasets", json=dataset_body(version="1.10.0", n=2))
    client.post("/api/datasets", json=dataset_body(version="2.0.0-rc.1", n=1))
    view = client.get("/api/datasets/arith/versions/latest").json()
    assert view["version"]["version"] == "1.10.0"
    assert view["version"]["is_latest"] is True
    assert [c["id"] for c in view["cases"]] == ["q0", "q1"]
    assert view["cases"][1]["expected"] == "1"
    assert view["next_after"] is None
    exact = client.get("/api/datasets/arith/versions/2.0.0-rc.1").json()
    assert exact["version"]["cases"] == 1


def test_validate_reports_ok_and_existing_versions_and_writes_nothing(client: TestClient) -> None:
    client.post("/api/datasets", json=dataset_body())
    report = client.post("/api/datasets/validate", json=dataset_body(version="1.1.0")).json()
    assert report["ok"] is True
    assert report["existing_versions"] == ["1.0.0"]
    assert report["version_exists"] is False
    assert report["cases"] == 3
    clash = client.post("/api/datasets/validate", json=dataset_body(answer_offset=1)).json()
    assert clash["ok"] is False
    assert clash["would_conflict"] is True
    assert clash["errors"][0]["path"] == "version"
    same = client.post("/api/datasets/validate", json=dataset_body()).json()
    assert same["identical"] is True
    assert [v["version"] for v in client.get("/api/datasets/arith/versions").json()] == ["1.0.0"]


def test_validate_returns_schema_errors_by_path_with_status_200(client: TestClient) -> None:
    body = dataset_body()
    body["cases"][1]["env"] = {"kind": "spaceship"}
    response = client.post("/api/datasets/validate", json=body)
    assert response.status_code == 200
    report = response.json()
    assert report["ok"] is False
    assert any(e["path"].startswith("cases.1.env") for e in report["errors"])


def test_list_searches_sorts_and_pages(client: TestClient) -> None:
    client.post("/api/datasets", json=dataset_body("alpha", n=1, description="Grade school math"))
    client.post("/api/datasets", json=dataset_body("beta", n=5, tags=["web"]))
    client.post("/api/datasets", json=dataset_body("gamma", n=3))
    client.post("/api/datasets", json=dataset_body("gamma", version="1.1.0", n=4))
    page = client.get("/api/datasets").json()
    assert [d["id"] for d in page["items"]] == ["alpha", "beta", "gamma"]
    assert (page["total"], page["total_versions"], page["total_cases"]) == (3, 4, 10)
    by_cases = client.get("/api/datasets", params={"sort": "cases"}).json()
    assert [d["id"] for d in by_cases["items"]] == ["beta", "gamma", "alpha"]
    assert by_cases["items"][1]["latest"] == "1.1.0"
    paged = client.get("/api/datasets", params={"limit": 1, "offset": 1}).json()
    assert [d["id"] for d in paged["items"]] == ["beta"]
    assert paged["total"] == 3
    assert [d["id"] for d in client.get("/api/datasets?search=MATH").json()["items"]] == ["alpha"]
    assert [d["id"] for d in client.get("/api/datasets?search=web").json()["items"]] == ["beta"]
    assert client.get("/api/datasets", params={"owner": "shared"}).json()["items"] == []
    assert client.get("/api/datasets", params={"owner": "own"}).json()["total"] == 3


def test_a_shared_dataset_is_listed_with_its_owner_until_shadowed(client: TestClient) -> None:
    client.post("/api/datasets?shared=true", json=dataset_body("common", n=2))
    shared = client.get("/api/datasets", params={"owner": "shared"}).json()["items"]
    assert [(d["id"], d["workspace"], d["shared"]) for d in shared] == [("common", "_shared", True)]
    client.post("/api/datasets", json=dataset_body("common", n=1))
    [own] = client.get("/api/datasets").json()["items"]
    assert (own["workspace"], own["cases"]) == ("default", 1)


def test_versions_are_listed_highest_semver_first(client: TestClient) -> None:
    for version in ("1.2.0", "1.9.0", "1.10.0", "1.10.0-rc.1"):
        client.post("/api/datasets", json=dataset_body(version=version))
    versions = client.get("/api/datasets/arith/versions").json()
    assert [v["version"] for v in versions] == ["1.10.0", "1.10.0-rc.1", "1.9.0", "1.2.0"]
    assert [v["is_latest"] for v in versions] == [True, False, False, False]


def test_keyset_paging_through_250_cases_returns_every_case_once(client: TestClient) -> None:
    assert client.post("/api/datasets", json=dataset_body(n=250)).status_code == 201
    seen: list[str] = []
    after = None
    pages = 0
    while True:
        params = {"limit": 100} | ({"after": after} if after is not None else {})
        view = client.get("/api/datasets/arith/versions/1.0.0", params=params).json()
        seen += [c["id"] for c in view["cases"]]
        pages += 1
        after = view["next_after"]
        if after is None:
            break
    assert pages == 3
    assert seen == [f"q{i}" for i in range(250)]


def test_jsonl_export_streams_every_case(client: TestClient) -> None:
    client.post("/api/datasets", json=dataset_body(n=250))
    with client.stream("GET", "/api/datasets/arith/versions/latest/cases.jsonl") as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("application/x-ndjson")
        raw = b"".join(response.iter_bytes())
    lines = raw.split(b"\n")
    assert lines[-1] == b""
    cases = [orjson.loads(line) for line in lines[:-1]]
    assert [c["id"] for c in cases] == [f"q{i}" for i in range(250)]
    assert cases[249]["expected"] == "249"


def test_one_case_is_read_by_id_even_with_a_slash(client: TestClient) -> None:
    body = dataset_body(n=1)
    body["cases"][0]["id"] = "chrome/abc 1"
    client.post("/api/datasets", json=body)
    case = client.get("/api/datasets/arith/versions/1.0.0/cases/chrome/abc%201").json()
    assert case["id"] == "chrome/abc 1"
    assert case["timeout_s"] == 1800
    missing = client.get("/api/datasets/arith/versions/1.0.0/cases/nope")
    assert missing.status_code == 404
    assert "nope" in missing.json()["message"]


def test_diff_reports_changed_added_and_removed_cases(client: TestClient) -> None:
    client.post("/api/datasets", json=dataset_body(n=3))
    candidate = dataset_body(version="1.1.0", n=4)
    candidate["cases"][1]["expected"] = "one"
    del candidate["cases"][0]
    client.post("/api/datasets", json=candidate)
    diff = client.get("/api/datasets/arith/diff", params={"base": "1.0.0"}).json()
    assert (diff["base"], diff["candidate"]) == ("1.0.0", "1.1.0")
    assert diff["summary"] == {"added": 1, "removed": 1, "changed": 1, "unchanged": 1}
    assert diff["changed"][0]["changes"] == [{"field": "expected", "before": "1", "after": "one"}]
    assert [c["id"] for c in diff["added"]] == ["q3"]


def test_deleting_one_version_hides_it_and_identical_content_revives_it(
    client: TestClient,
) -> None:
    client.post("/api/datasets", json=dataset_body())
    client.post("/api/datasets", json=dataset_body(version="1.1.0"))
    gone = client.delete("/api/datasets/arith/versions/1.1.0")
    assert gone.json() == {"workspace": "default", "id": "arith", "deleted": ["1.1.0"]}
    assert client.get("/api/datasets/arith/versions/1.1.0").status_code == 404
    assert client.get("/api/datasets/arith/versions/latest").json()["version"]["version"] == "1.0.0"
    revived = client.post("/api/datasets", json=dataset_body(version="1.1.0"))
    assert revived.status_code == 200
    assert revived.json()["revived"] is True
    assert client.get("/api/datasets/arith/versions/latest").json()["version"]["version"] == "1.1.0"


def test_bulk_delete_takes_versions_from_the_body_or_the_query(client: TestClient) -> None:
    for version in ("1.0.0", "1.1.0", "1.2.0", "1.3.0"):
        client.post("/api/datasets", json=dataset_body(version=version))
    by_body = client.request("DELETE", "/api/datasets/arith", json={"versions": ["1.0.0", "1.1.0"]})
    assert by_body.json()["deleted"] == ["1.0.0", "1.1.0"]
    by_query = client.delete("/api/datasets/arith", params={"versions": ["1.2.0"]})
    assert by_query.json()["deleted"] == ["1.2.0"]
    left = [v["version"] for v in client.get("/api/datasets/arith/versions").json()]
    assert left == ["1.3.0"]


def test_bulk_delete_without_versions_deletes_every_own_version(client: TestClient) -> None:
    client.post("/api/datasets", json=dataset_body())
    client.post("/api/datasets", json=dataset_body(version="2.0.0"))
    assert client.delete("/api/datasets/arith").json()["deleted"] == ["1.0.0", "2.0.0"]
    assert client.get("/api/datasets/arith/versions").status_code == 404
    assert client.get("/api/datasets").json()["total"] == 0


def test_setting_tags_moves_a_tag_between_versions(client: TestClient) -> None:
    client.post("/api/datasets", json=dataset_body())
    client.post("/api/datasets", json=dataset_body(version="1.1.0", n=2))
    url = "/api/datasets/arith/versions/{}/tags"
    first = client.put(url.format("1.0.0"), json={"tags": [" prod ", "baseline", "prod"]})
    assert first.status_code == 200
    assert first.json()["version_tags"] == ["baseline", "prod"]
    assert client.get("/api/datasets/arith/versions/prod").json()["version"]["version"] == "1.0.0"
    moved = client.put(url.format("1.1.0"), json={"tags": ["prod"]}).json()
    assert moved["version_tags"] == ["prod"]
    assert client.get("/api/datasets/arith/versions/prod").json()["version"]["version"] == "1.1.0"
    tags = {
        v["version"]: v["version_tags"] for v in client.get("/api/datasets/arith/versions").json()
    }
    assert tags == {"1.0.0": ["baseline"], "1.1.0": ["prod"]}
    diff = client.get("/api/datasets/arith/diff?base=baseline&candidate=prod").json()
    assert diff["summary"]["removed"] == 1


def test_activity_lists_events_newest_first_and_pages_back(client: TestClient) -> None:
    client.post("/api/datasets", json=dataset_body())
    client.put("/api/datasets/arith/versions/1.0.0/tags", json={"tags": ["prod"]})
    client.delete("/api/datasets/arith/versions/1.0.0")
    client.post("/api/datasets", json=dataset_body())
    first = client.get("/api/datasets/arith/activity", params={"limit": 2}).json()
    assert [i["kind"] for i in first["items"]] == ["revived", "deleted"]
    assert first["next_before"] is not None
    rest = client.get(
        "/api/datasets/arith/activity", params={"before": first["next_before"], "limit": 10}
    ).json()
    assert [i["kind"] for i in rest["items"]] == ["tagged", "registered"]
    assert rest["items"][1]["details"]["version"] == "1.0.0"
    assert rest["next_before"] is None


def test_cases_are_searched_and_placed_between_their_neighbours_over_http(
    client: TestClient,
) -> None:
    assert client.post("/api/datasets", json=dataset_body(n=12)).status_code == 201
    found = client.get("/api/datasets/arith/versions/latest/search", params={"q": "WHAT IS 1"})
    assert found.status_code == 200, found.text
    # q1, q10, q11: case-insensitive, in version order, each with its 0-based position
    assert [(m["position"], m["case"]["id"]) for m in found.json()] == [
        (1, "q1"),
        (10, "q10"),
        (11, "q11"),
    ]
    limited = client.get("/api/datasets/arith/versions/1.0.0/search?q=what&limit=2")
    assert [m["case"]["id"] for m in limited.json()] == ["q0", "q1"]
    assert client.get("/api/datasets/arith/versions/latest/search?q=%20").status_code == 400
    assert client.get("/api/datasets/nope/versions/latest/search?q=x").status_code == 404

    middle = client.get("/api/datasets/arith/versions/latest/neighbours/q5")
    assert middle.json() == {"position": 5, "previous": "q4", "next": "q6"}
    first = client.get("/api/datasets/arith/versions/latest/neighbours/q0")
    assert first.json() == {"position": 0, "previous": None, "next": "q1"}
    last = client.get("/api/datasets/arith/versions/latest/neighbours/q11")
    assert last.json() == {"position": 11, "previous": "q10", "next": None}
    assert client.get("/api/datasets/arith/versions/latest/neighbours/zz").status_code == 404
