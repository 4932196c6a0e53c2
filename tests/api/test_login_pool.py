"""Issue 27: the password check held a database connection while argon2 ran (~50 ms of CPU
and 64 MiB each), so ~50 concurrent wrong logins emptied the connection pool and the rest
answered 500. Against a real uvicorn server on loopback, SQLite and PostgreSQL, whose pool
holds 2 connections (waits at most 5 s for one): 50 concurrent wrong logins answer 401,
never 500, and the right password still logs in after. Before the fix, 48 of them waited
behind 2 argon2 checks at a time and the pool gave up on them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from sqlalchemy import Engine, create_engine

from benchbook.services import accounts
from benchbook.services.context import Context
from benchbook.settings import Settings
from benchbook.store.engine import normalize_url
from tests.mcp.live import live_server

CONCURRENT = 50


async def _storm(url: str) -> list[int]:
    limits = httpx.Limits(max_connections=CONCURRENT)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as http:

        async def attempt(i: int) -> int:
            body = {"email": f"user{i % 10}@example.org", "password": f"wrong-{i}"}
            return (await http.post("/api/login", json=body)).status_code

        return list(await asyncio.wait_for(asyncio.gather(*map(attempt, range(CONCURRENT))), 300))


@pytest.mark.both_backends
def test_fifty_concurrent_wrong_logins_answer_401_never_500(
    engine: Engine, database_url: str, tmp_path: Path, ctx: Context
) -> None:
    for i in range(10):
        accounts.create_user(ctx, f"user{i}@example.org", f"User {i}", "right-password-1")
        accounts.add_member(ctx, f"user{i}@example.org", "member")
    settings = Settings(
        home=tmp_path / "home",
        database_url=database_url,
        login_failures_per_account=1000,  # the throttle is not what is under test here
        login_failures_per_address=1000,
        run_worker=False,
    )
    small = create_engine(normalize_url(database_url), pool_size=2, max_overflow=0, pool_timeout=5)
    with live_server(settings, small) as url:
        statuses = asyncio.run(_storm(url))
        right = {"email": "user1@example.org", "password": "right-password-1"}
        assert httpx.post(f"{url}/api/login", json=right, timeout=60).status_code == 200
    small.dispose()
    assert sorted(set(statuses)) == [401], statuses
