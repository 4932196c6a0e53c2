"""People for the account-route tests: users with a role and an API key, made through the
services on the database the app serves."""

from __future__ import annotations

import uuid
from typing import Any

from fastapi.testclient import TestClient

from benchbook.contracts.accounts import KeyScope, Role
from benchbook.services import accounts
from benchbook.services import datasets as datasets_svc
from benchbook.services.context import Context
from benchbook.services.keys import create_api_key
from tests.api.conftest import dataset_body

PASSWORD = "correct-horse-battery"
SCOPE_OF: dict[Role, KeyScope] = {"viewer": "read", "member": "write", "admin": "admin"}


def person(ctx: Context, name: str, role: Role = "member", admin: bool = False) -> str:
    """A user ``{name}@example.org`` with ``role`` in ``ctx``'s workspace; returns their API key
    (scope matching the role). ``admin`` makes them an installation admin."""
    email = f"{name}@example.org"
    accounts.create_user(ctx, email, name.title(), PASSWORD, installation_admin=admin)
    accounts.add_member(ctx, email, role)
    return create_api_key(ctx, "tests", SCOPE_OF[role], user=email).key


def bearer(key: str) -> dict[str, str]:
    """The ``Authorization`` header for an API key."""
    return {"Authorization": f"Bearer {key}"}


def register(ctx: Context, dataset_id: str = "arith") -> None:
    """Register ``dataset_id``@1.0.0 in ``ctx``'s workspace."""
    datasets_svc.register_dataset(ctx, datasets_svc.parse_dataset(dataset_body(dataset_id)))


def other_workspace(ctx: Context, dataset_id: str = "hidden") -> Context:
    """A fresh workspace ``other-…`` holding ``dataset_id``; returns the local admin acting
    there (unique, since a PostgreSQL test database may keep workspaces between tests)."""
    name = f"other-{uuid.uuid4().hex[:8]}"
    accounts.create_workspace(ctx, name)
    there = accounts.in_workspace(ctx, name)
    register(there, dataset_id)
    return there


def login(client: TestClient, name: str) -> str:
    """Log ``name`` in with a session cookie (kept by ``client``); returns the CSRF token."""
    response = client.post(
        "/api/login", json={"email": f"{name}@example.org", "password": PASSWORD}
    )
    assert response.status_code == 200, response.text
    token: str = response.json()["csrf_token"]
    return token


def error_code(response: Any) -> tuple[int, str]:
    """``(status, envelope code)`` of an error answer."""
    return response.status_code, response.json()["code"]
