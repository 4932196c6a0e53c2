"""The client against a real ``benchbook serve`` subprocess, once per backend for the whole
package (every module of tests/client shares it, and the datasets ``arith`` 1.0.0 and 1.1.0).

Credentials are minted on the server's own database: ``admin`` (admin of ``default``) and
``other`` (admin of the workspace ``other``), both API keys.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from benchbook.client import Client
from benchbook.contracts import Dataset
from benchbook.services import accounts, keys
from benchbook.services.context import Context, Principal, local_admin_context
from benchbook.settings import Settings
from benchbook.store.engine import make_engine
from tests.live_server import PASSWORD, Server, fresh_database, serve


@dataclass
class Live:
    """A running server and what the tests need to reach it."""

    server: Server
    url: str
    admin_key: str
    other_key: str
    database_url: str
    home: Path

    def client(self, key: str | None = None, **kwargs: object) -> Client:
        return Client(self.url, key or self.admin_key, **kwargs)  # type: ignore[arg-type]

    def mint_key(self, name: str, scope: str = "write") -> tuple[str, str]:
        """``(key, key id)`` of a new key of ``admin@example.org``."""
        engine = make_engine(self.database_url)
        try:
            ctx = local_admin_context(
                engine, Settings(home=self.home, database_url=self.database_url)
            )
            created = keys.create_api_key(ctx, name, scope, user="admin@example.org")  # type: ignore[arg-type]
            return created.key, created.info.id
        finally:
            engine.dispose()

    def revoke(self, key_id: str) -> None:
        engine = make_engine(self.database_url)
        try:
            ctx = local_admin_context(
                engine, Settings(home=self.home, database_url=self.database_url)
            )
            keys.revoke_api_key(ctx, key_id)
        finally:
            engine.dispose()


@pytest.fixture(scope="package", params=["sqlite", "postgresql"])
def live(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Live]:
    """``benchbook serve`` on each backend (one per package run) with two workspaces' keys."""
    home = tmp_path_factory.mktemp("client-home")
    with (
        fresh_database(request.param, tmp_path_factory) as url,
        serve((request.param, url), home) as server,
    ):
        engine = make_engine(url)
        settings = Settings(home=home, database_url=url)
        ctx = local_admin_context(engine, settings)
        admin_key = keys.create_api_key(ctx, "client", "admin", user="admin@example.org").key
        accounts.create_workspace(ctx, "other")
        other = Context(
            principal=Principal(
                user_id=ctx.principal.user_id,
                display_name="Local admin",
                workspace="other",
                role="admin",
                can_publish_shared=True,
            ),
            engine=engine,
            settings=settings,
        )
        accounts.create_user(other, "otto@example.org", "Otto Other", PASSWORD)
        accounts.add_member(other, "otto@example.org", "admin")
        other_key = keys.create_api_key(other, "other", "write", user="otto@example.org").key
        engine.dispose()
        yield Live(server, server.url, admin_key, other_key, url, home)


def case(case_id: str, task: str, expected: Any, **fields: Any) -> dict[str, Any]:
    return {
        "id": case_id,
        "env": {"kind": "prompt"},
        "task": task,
        "expected": expected,
        "graders": [{"id": "numeric"}],
        **fields,
    }


V1 = {
    "id": "arith",
    "version": "1.0.0",
    "description": "sums",
    "cases": [
        case("a", "1+1?", 2),
        case("b", "2+2?", 4, tags=["easy"]),
        case("c", "3+3?", 6, metadata={"source": "x", "work": "3+3=6"}, gold_fields=["work"]),
        case("d", "4+4?", 8),
        case("e", "5+5?", "10"),
    ],
}
V2 = {
    **V1,
    "version": "1.1.0",
    "cases": [*V1["cases"][:4], case("e", "5+5?", 11), case("f", "6+6?", 12)],
}


@pytest.fixture(scope="package")
def bb(live: Live) -> Client:
    client = live.client()
    assert client.datasets.register(V1).created
    assert client.datasets.register(Dataset.model_validate(V2)).created
    return client
