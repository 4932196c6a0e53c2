"""Parity (SPEC D): every public service operation has an HTTP route named after it."""

from __future__ import annotations

import inspect

from fastapi.testclient import TestClient

from benchbook.services.registry import OPERATIONS


def operation_ids(client: TestClient) -> dict[str, str]:
    """``operationId → "METHOD path"`` from the served OpenAPI document."""
    schema = client.get("/api/openapi.json").json()
    return {
        op["operationId"]: f"{method.upper()} {path}"
        for path, item in schema["paths"].items()
        for method, op in item.items()
    }


def test_every_registered_operation_has_an_http_route(client: TestClient) -> None:
    routes = operation_ids(client)
    missing = sorted(name for name in OPERATIONS if name not in routes)
    assert missing == [], f"operations without an HTTP route: {missing}"


def test_operation_names_are_the_service_functions_own_names() -> None:
    for name, fn in OPERATIONS.items():
        assert fn.__name__ == name
        assert fn.__module__.startswith("benchbook.services.")
        first = next(iter(inspect.signature(fn).parameters))
        assert first == "ctx", f"{name} must take the Context first"


def test_every_public_dataset_service_function_taking_a_context_is_registered() -> None:
    from benchbook.services import dataset_cases, datasets, version_storage

    public = {
        name
        for module in (datasets, dataset_cases, version_storage)
        for name, fn in inspect.getmembers(module, inspect.isfunction)
        if fn.__module__ == module.__name__
        and not name.startswith("_")
        and next(iter(inspect.signature(fn).parameters), None) == "ctx"
        # the streaming core behind register_dataset and imports; export_dataset's bytes in
        # socket-sized chunks (its HTTP route's body)
        and name not in {"store_version", "export_dataset_chunks"}
    }
    assert public - set(OPERATIONS) == set()


def test_every_api_route_is_tagged_with_an_operation_id(client: TestClient) -> None:
    schema = client.get("/api/openapi.json").json()
    for path, item in schema["paths"].items():
        for method, op in item.items():
            assert op.get("operationId"), f"{method.upper()} {path} has no operationId"
