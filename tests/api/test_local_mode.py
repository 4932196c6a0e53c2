"""Local admin mode (no users yet): scripts may write without credentials, other sites may not."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from benchbook.app import create_app
from benchbook.settings import Settings

DATASET = {
    "id": "toy",
    "version": "1.0.0",
    "cases": [{"id": "a", "env": {"kind": "prompt"}, "task": "2+2?", "expected": "4"}],
}


def test_a_script_without_origin_may_write_as_the_local_admin(
    settings: Settings, engine: Engine
) -> None:
    with TestClient(create_app(settings, engine)) as client:
        assert client.post("/api/datasets", json=DATASET).status_code == 201


def test_a_cross_site_write_is_refused_and_stores_nothing(
    settings: Settings, engine: Engine
) -> None:
    with TestClient(create_app(settings, engine)) as client:
        resp = client.post(
            "/api/datasets", json=DATASET, headers={"Origin": "https://evil.example"}
        )
        assert resp.status_code == 403
        assert resp.json()["code"] == "forbidden"
        assert client.get("/api/datasets").json()["total"] == 0


def test_a_same_origin_browser_write_is_accepted(settings: Settings, engine: Engine) -> None:
    with TestClient(create_app(settings, engine)) as client:
        resp = client.post("/api/datasets", json=DATASET, headers={"Origin": "http://testserver"})
        assert resp.status_code == 201
