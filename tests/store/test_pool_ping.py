"""A pooled PostgreSQL connection is pinged before reuse only after sitting idle
(``store/pool_ping.py``, issue 32): not at every checkout, as ``pool_pre_ping`` did, and a
connection the server closed meanwhile is still replaced without an error."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, create_engine, text

from benchbook.store import pool_ping
from benchbook.store.engine import make_engine, normalize_url
from tests.conftest import PG_URL, _need


@pytest.fixture
def pg() -> Iterator[Engine]:
    if not PG_URL:
        _need("BENCHBOOK_TEST_DATABASE_URL is not set; PostgreSQL tests skipped")
    engine = make_engine(PG_URL)
    yield engine
    engine.dispose()


def _pings(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = engine.dialect.do_ping

    def counted(dbapi_conn: object) -> bool:
        calls.append(1)
        return bool(real(dbapi_conn))

    monkeypatch.setattr(engine.dialect, "do_ping", counted)
    return calls


def test_a_connection_used_a_moment_ago_is_reused_without_a_ping(
    pg: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    pings = _pings(pg, monkeypatch)
    for _ in range(5):
        with pg.connect() as conn:
            assert conn.execute(text("SELECT 1")).scalar_one() == 1
    assert pings == []
    monkeypatch.setattr(pool_ping, "PING_IDLE_S", 0.0)  # now every reuse counts as idle
    with pg.connect() as conn:
        conn.execute(text("SELECT 1"))
    assert pings == [1]


def test_an_idle_connection_the_server_closed_is_replaced(
    pg: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pg.connect() as conn:
        pid = conn.execute(text("SELECT pg_backend_pid()")).scalar_one()
    admin = create_engine(normalize_url(PG_URL), isolation_level="AUTOCOMMIT")
    with admin.connect() as other:
        assert other.execute(text("SELECT pg_terminate_backend(:p)"), {"p": pid}).scalar_one()
    admin.dispose()
    monkeypatch.setattr(pool_ping, "PING_IDLE_S", 0.0)
    with pg.connect() as conn:
        assert conn.execute(text("SELECT pg_backend_pid()")).scalar_one() != pid
