"""A first-come, first-served queue of SQLite writers inside one process.

SQLite has one writer per database file. Threads of one server that write at once otherwise
meet SQLite's busy handler, which makes the losers sleep and retry with a growing back-off, so
a write that arrived first may wait far longer than one that arrived later (no fairness: p99
latency under many clients). Here each database file (keyed by its resolved path) has one FIFO
per process: a connection takes its place just before the first write statement of its
transaction and leaves at commit, rollback, close, invalidation or its return to the pool.

- A write is a statement whose first keyword (after whitespace and comments, any case) is
  INSERT, UPDATE, DELETE, REPLACE, CREATE, DROP or ALTER, or a ``WITH …`` whose main statement
  is one of those. Reads never queue (WAL: readers never wait for the writer).
- A connection holding its place writes again without queueing (re-entrant).
- The time waited in the queue comes off the busy timeout: past it, the write is refused with
  :func:`busy_error` (503 with ``Retry-After``); once through, ``PRAGMA busy_timeout`` is set to
  what remains, the longest SQLite's own handler may still wait for *another process*.
- ``conn.info[NO_WAIT]`` true (:func:`~benchbook.store.engine.try_write`): refuse at once when
  the queue is not free instead of waiting in it.
- ``:memory:`` databases (one database per connection, nothing to share) skip the queue.

Limits: per process only (another process still meets SQLite's busy handler); writes are
recognised by keyword, so a ``COMMIT`` sent as SQL text is not seen (use ``conn.commit()``),
nor is a write on a raw DBAPI cursor (an import's bulk load: its transaction queued already, at
its version row's ``INSERT``).
"""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, event
from sqlalchemy.engine import make_url

from benchbook.errors import Unavailable

RETRY_AFTER_S = 5
"""``Retry-After`` of a write refused because SQLite's writer stayed busy."""
NO_WAIT = "benchbook_writer_no_wait"
"""``Connection.info`` key: true while a write must not wait for the queue (``try_write``)."""
WRITES = frozenset({"INSERT", "UPDATE", "DELETE", "REPLACE", "CREATE", "DROP", "ALTER"})
_TIMEOUT_MS = "benchbook_busy_timeout_ms"  # Connection.info: the busy timeout last set here
_LEAD = re.compile(r"(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*", re.DOTALL)
_WORD = re.compile(r"[A-Za-z]+")


def busy_error(cause: str | None = None) -> Unavailable:
    """The refusal of a write while SQLite's writer is busy: 503, ``Retry-After``
    :data:`RETRY_AFTER_S`; ``cause`` (when given) goes into ``details.cause``."""
    details: dict[str, Any] = {"retry_after_s": RETRY_AFTER_S}
    if cause is not None:
        details["cause"] = cause
    message = "the database is busy with another write (such as a long import); try again in"
    return Unavailable(f"{message} {RETRY_AFTER_S} s", details)


def is_write(statement: str) -> bool:
    """Whether ``statement`` writes, by its first keyword (module docstring)."""
    word = _WORD.match(statement, _LEAD.match(statement).end())  # type: ignore[union-attr]
    if word is None:
        return False
    keyword = word.group().upper()
    if keyword == "WITH":
        keyword = _main_keyword(statement, word.end())
    return keyword in WRITES


def _main_keyword(statement: str, start: int) -> str:
    """The first keyword outside parentheses and quotes after a ``WITH``'s name list: its
    main statement (``SELECT``, ``INSERT`` …); '' when there is none."""
    depth, i, n = 0, start, len(statement)
    while i < n:
        ch = statement[i]
        if ch in "'\"`":
            end = statement.find(ch, i + 1)
            i = n if end < 0 else end + 1
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0 and ch.isalpha():
            word = _WORD.match(statement, i)
            assert word is not None
            keyword = word.group().upper()
            if keyword in WRITES or keyword in ("SELECT", "VALUES"):
                return keyword
            i = word.end()
            continue
        i += 1
    return ""


class WriterQueue:
    """The FIFO of one database file: connections (DBAPI objects) waiting for, or holding,
    the right to write. A release hands the turn straight to the next in line (its own
    event: no herd of woken waiters competing for the GIL)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: deque[tuple[object, threading.Event]] = deque()
        self.holder: object | None = None

    def acquire(self, token: object, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` (0: not at all) for ``token``'s turn; False when it did
        not come. Holding it already returns True at once."""
        with self._lock:
            if self.holder is token:
                return True
            if self.holder is None and not self._waiting:
                self.holder = token
                return True
            if timeout_s <= 0:
                return False
            turn = threading.Event()
            self._waiting.append((token, turn))
        turn.wait(timeout_s)
        with self._lock:
            if self.holder is token:  # handed over, perhaps just as the wait timed out
                return True
            self._waiting.remove((token, turn))
            return False

    def release(self, token: object) -> None:
        """Give up ``token``'s turn to the next in line (nothing when it does not hold it)."""
        with self._lock:
            if self.holder is not token:
                return
            self.holder = None
            if not self._waiting:
                return
            self.holder, turn = self._waiting.popleft()
            turn.set()
        time.sleep(0)  # hand the GIL over too: the next writer runs now, not in up to 5 ms


_queues: dict[str, WriterQueue] = {}
_queues_lock = threading.Lock()


def queue_for(path: str) -> WriterQueue:
    """The process's one queue of database file ``path`` (resolved, so two engines on one
    file share it)."""
    key = str(Path(path).resolve())
    with _queues_lock:
        return _queues.setdefault(key, WriterQueue())


def queue_writers(engine: Engine, busy_timeout_s: float) -> WriterQueue | None:
    """Put ``engine``'s writers in their file's queue (SQLite files only; None otherwise).

    ``busy_timeout_s`` is the whole wait a write may have, queue and busy handler together.
    """
    url = make_url(engine.url)
    database = url.database or ""
    in_memory = database in ("", ":memory:") or url.query.get("mode") == "memory"
    if url.get_backend_name() != "sqlite" or in_memory or database.startswith("file::memory:"):
        return None
    queue = queue_for(database)
    full_ms = round(busy_timeout_s * 1000)

    @event.listens_for(engine, "before_cursor_execute")
    def _before_write(
        conn: Connection, cursor: Any, statement: str, *_args: Any, **_kw: Any
    ) -> None:
        dbapi = cursor.connection
        if queue.holder is dbapi or not is_write(statement):
            return
        no_wait = bool(conn.info.get(NO_WAIT))
        started = time.monotonic()
        if not queue.acquire(dbapi, 0 if no_wait else busy_timeout_s):
            waited = "refused at once" if no_wait else f"waited {busy_timeout_s:g} s"
            raise busy_error(f"another write of this process holds the writer queue ({waited})")
        if not no_wait:  # set only when it changes: the full timeout is the connect-time one
            left_ms = max(0, round((busy_timeout_s - (time.monotonic() - started)) * 1000))
            if conn.info.get(_TIMEOUT_MS, full_ms) != left_ms:
                dbapi.execute(f"PRAGMA busy_timeout = {left_ms}")
                conn.info[_TIMEOUT_MS] = left_ms

    def _end(conn: Connection, end: str) -> None:
        """Commit or roll back the DBAPI transaction first (SQLAlchemy's own call after this
        hook finds nothing left to do), then let the next writer in."""
        try:
            dbapi = conn.connection.dbapi_connection
        except Exception:  # invalidated: the pool's invalidate/close hooks release it
            return
        if queue.holder is not dbapi:
            return
        try:
            getattr(dbapi, end)()
        except Exception:  # SQLAlchemy repeats it and reports the error as usual
            return
        queue.release(dbapi)

    event.listen(engine, "commit", lambda conn: _end(conn, "commit"))
    event.listen(engine, "rollback", lambda conn: _end(conn, "rollback"))

    def _gone(dbapi: Any, *_args: Any) -> None:
        if dbapi is not None:
            queue.release(dbapi)

    for name in ("checkin", "close", "invalidate", "soft_invalidate", "close_detached"):
        event.listen(engine.pool, name, _gone)
    return queue
