"""An HTTP client over ``create_app(settings)`` on each backend, and dataset bodies to send."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from benchbook.app import create_app
from benchbook.settings import Settings


def make_client(settings: Settings) -> Iterator[TestClient]:
    """A TestClient for a fresh app; its engine is disposed afterwards."""
    app = create_app(settings)
    with TestClient(app) as client:
        yield client
    app.state.engine.dispose()


@pytest.fixture
def client(engine: Engine, settings: Settings) -> Iterator[TestClient]:
    """The API over the test database (``engine`` clears PostgreSQL tables first)."""
    yield from make_client(settings)


def dataset_body(
    dataset_id: str = "arith",
    version: str = "1.0.0",
    n: int = 3,
    answer_offset: int = 0,
    **extra: Any,
) -> dict[str, Any]:
    """A prompt dataset of ``n`` cases ``q0…`` whose expected answers are ``i + answer_offset``."""
    cases = [
        {
            "id": f"q{i}",
            "env": {"kind": "prompt"},
            "task": f"What is {i} + 0?",
            "expected": str(i + answer_offset),
        }
        for i in range(n)
    ]
    return {"id": dataset_id, "version": version, "cases": cases, **extra}


def listing(client: TestClient) -> Any:
    """Every visible dataset with its versions: the registry as a client can read it back."""
    page = client.get("/api/datasets", params={"limit": 1000}).json()
    return {
        d["id"]: [
            (v["version"], v["cases"], v["content_hash"])
            for v in client.get(f"/api/datasets/{d['id']}/versions").json()
        ]
        for d in page["items"]
    }
