"""Checking a pooled PostgreSQL connection before reuse only when it sat idle (issue 32).

SQLAlchemy's ``pool_pre_ping`` sends ``SELECT 1`` at every checkout: a whole round trip before
each statement group, several per API request (8% of the server's samples on a 50-row run
report under load). A connection handed back a moment ago is as alive as it was then; one idle
longer than :data:`PING_IDLE_S` may have been closed by the server, a proxy or a restart, and is
pinged first — a dead one is replaced by a fresh connection, as with ``pool_pre_ping``.

Left to chance: the database restarting within :data:`PING_IDLE_S` of a connection's last use.
Its next statement then fails once (a 500 or a failed CLI command); SQLAlchemy sees the
disconnect and drops the whole pool, so the requests after it reconnect.
"""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import Engine, event
from sqlalchemy.exc import DisconnectionError

PING_IDLE_S = 5.0
"""Seconds a pooled connection may sit idle and still be reused without a ping."""
_IDLE_SINCE = "benchbook_idle_since"


def ping_when_idle(engine: Engine) -> None:
    """Ping ``engine``'s pooled connections at checkout only after :data:`PING_IDLE_S` idle
    (instead of ``pool_pre_ping``'s every checkout); a failed ping makes the pool replace the
    connection (``DisconnectionError``)."""

    @event.listens_for(engine, "checkin")
    def _checked_in(dbapi_conn: Any, record: Any) -> None:
        record.info[_IDLE_SINCE] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _checked_out(dbapi_conn: Any, record: Any, proxy: Any) -> None:
        since = record.info.pop(_IDLE_SINCE, None)
        if since is None or time.monotonic() - since < PING_IDLE_S:
            return  # just connected, or in use a moment ago
        try:
            alive = engine.dialect.do_ping(dbapi_conn)
        except Exception as exc:  # any failure: the pool connects afresh
            raise DisconnectionError("pooled connection failed its ping") from exc
        if not alive:
            raise DisconnectionError("pooled connection failed its ping")
