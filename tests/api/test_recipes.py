"""Recipe routes (SPEC D, E.6) on both backends: ``/api/recipes…``."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from tests.services.test_recipes import ROWS, body


def test_register_then_the_identical_recipe_again_then_a_conflict(client: TestClient) -> None:
    first = client.post("/api/recipes", json=body())
    assert first.status_code == 201 and first.json()["created"] is True
    again = client.post("/api/recipes", json=body())
    assert again.status_code == 200 and again.json()["created"] is False
    assert again.json()["content_hash"] == first.json()["content_hash"]
    clash = client.post("/api/recipes", json=body(description="changed"))
    assert clash.status_code == 409 and clash.json()["code"] == "conflict"
    assert "arith@1.0.0" in clash.json()["message"]


def test_a_javascript_origin_link_is_a_400_naming_the_field(client: TestClient) -> None:
    response = client.post("/api/recipes", json=body(origin={"paper": "javascript:alert(1)"}))
    assert response.status_code == 400 and response.json()["code"] == "invalid_input"
    paths = [e["path"] for e in response.json()["details"]["errors"]]
    assert any(p.endswith("origin.paper") for p in paths)
    assert client.get("/api/recipes").json() == []


def test_get_resolves_latest_and_list_shows_versions(client: TestClient) -> None:
    for version in ("1.2.0", "1.10.0", "2.0.0-rc.1"):
        client.post("/api/recipes", json=body(version, description=f"v{version}"))
    latest = client.get("/api/recipes/arith/versions/latest")
    assert latest.status_code == 200
    assert (latest.json()["version"], latest.json()["description"]) == ("1.10.0", "v1.10.0")
    assert client.get("/api/recipes/arith/versions/1.2.0").json()["version"] == "1.2.0"
    missing = client.get("/api/recipes/arith/versions/9.9.9")
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"
    listed: list[dict[str, Any]] = client.get("/api/recipes").json()
    assert [(r["id"], r["latest"], r["versions"]) for r in listed] == [
        ("arith", "1.10.0", ["1.2.0", "1.10.0", "2.0.0-rc.1"])
    ]
    assert client.get("/api/recipes", params={"search": "zzz"}).json() == []


def test_validate_is_a_dry_run(client: TestClient) -> None:
    fresh = client.post("/api/recipes/validate", json=body())
    assert fresh.status_code == 200 and fresh.json()["ok"] is True
    assert client.get("/api/recipes").json() == []
    client.post("/api/recipes", json=body())
    clash = client.post("/api/recipes/validate", json=body(description="changed")).json()
    assert clash["ok"] is False and clash["would_conflict"] is True
    bad = client.post("/api/recipes/validate", json={"id": "x"}).json()
    assert bad["ok"] is False and {e["path"] for e in bad["errors"]} >= {"source", "mapping"}


def test_an_import_from_a_registered_recipe_over_http_stamps_its_version(
    client: TestClient,
) -> None:
    client.post("/api/recipes", json=body("1.0.0"))
    client.post("/api/recipes", json=body("1.1.0"))
    request = {"recipe": {"id": "arith"}, "text": ROWS, "format": "jsonl"}
    response = client.post("/api/benchmarks/import", json=request)
    assert response.status_code == 201, response.text
    view = client.get("/api/datasets/arith/versions/1.0.0").json()
    lineage = view["version"]["produced_by"]
    assert (lineage["via"], lineage["version"]) == ("recipe", "1.1.0")
    assert [c["expected"] for c in view["cases"]] == ["2", "4"]
