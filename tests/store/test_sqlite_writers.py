"""SQLite writers of one process queue first come, first served (``store/sqlite_writers.py``):
real files in ``tmp_path``, real threads."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Connection, Engine, create_engine, text

from benchbook.errors import Unavailable
from benchbook.store.engine import make_engine, try_write
from benchbook.store.sqlite_writers import is_write, queue_for, queue_writers

#: Long enough that "answered before it" means "never waited", however loaded the machine.
LONG_S = 10.0
INSERT = text("INSERT INTO t (n) VALUES (:n)")


def _engine(path: Path, busy_timeout_s: float = LONG_S) -> Engine:
    engine = make_engine(f"sqlite:///{path}", busy_timeout_s)
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, n INTEGER)")
    return engine


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "w.db"


@pytest.fixture
def engine(db: Path) -> Iterator[Engine]:
    eng = _engine(db)
    yield eng
    eng.dispose()


def _numbers(engine: Engine) -> list[int]:
    with engine.connect() as conn:
        return list(conn.scalars(text("SELECT n FROM t ORDER BY id")))


def _held(engine: Engine) -> Connection:
    """A connection in the middle of a write transaction (it holds the queue)."""
    conn = engine.connect()
    conn.execute(INSERT, {"n": -1})
    return conn


def _write_in_thread(engine: Engine, n: int) -> threading.Thread:
    def write() -> None:
        with engine.begin() as conn:
            conn.execute(INSERT, {"n": n})

    thread = threading.Thread(target=write)
    thread.start()
    return thread


def test_writers_are_served_in_the_order_they_arrived(engine: Engine) -> None:
    holder = _held(engine)
    threads = []
    for n in range(6):
        threads.append(_write_in_thread(engine, n))
        time.sleep(0.15)  # each writer waits long enough for SQLite's back-off to grow
    holder.commit()
    holder.close()
    for thread in threads:
        thread.join(LONG_S)
    assert _numbers(engine) == [-1, 0, 1, 2, 3, 4, 5]


def test_reads_do_not_wait_behind_a_held_writer(engine: Engine, db: Path) -> None:
    holder = _held(engine)
    answers: list[int] = []

    def read() -> None:
        with engine.connect() as conn:
            answers.append(conn.execute(text("SELECT count(*) FROM t")).scalar_one())

    started = time.monotonic()
    reader = threading.Thread(target=read)
    reader.start()
    reader.join(LONG_S)
    elapsed = time.monotonic() - started
    assert answers == [0]
    assert elapsed < LONG_S / 2
    assert queue_for(str(db)).holder is not None
    holder.rollback()
    holder.close()


@pytest.mark.parametrize("end", ["commit", "rollback", "close", "invalidate", "driver_sql"])
def test_the_queue_is_released_when_the_transaction_ends(
    engine: Engine, db: Path, end: str
) -> None:
    conn = engine.connect()
    if end == "driver_sql":
        conn.exec_driver_sql("INSERT INTO t (n) VALUES (-1)")
    else:
        conn.execute(INSERT, {"n": -1})
    assert queue_for(str(db)).holder is not None
    if end in ("commit", "driver_sql"):
        conn.commit()
    else:
        getattr(conn, end)()
    assert queue_for(str(db)).holder is None
    _write_in_thread(engine, 1).join(LONG_S)
    conn.close()
    assert _numbers(engine)[-1] == 1


def test_an_exception_inside_begin_releases_the_queue(engine: Engine, db: Path) -> None:
    with pytest.raises(RuntimeError), engine.begin() as conn:
        conn.execute(INSERT, {"n": -1})
        raise RuntimeError("boom")
    assert queue_for(str(db)).holder is None
    _write_in_thread(engine, 1).join(LONG_S)
    assert _numbers(engine) == [1]


def test_a_wait_longer_than_the_busy_timeout_is_unavailable_naming_the_queue(
    db: Path,
) -> None:
    engine = _engine(db, busy_timeout_s=0.3)
    holder = _held(engine)
    started = time.monotonic()
    with pytest.raises(Unavailable) as caught, engine.begin() as conn:
        conn.execute(INSERT, {"n": 1})
    elapsed = time.monotonic() - started
    holder.rollback()
    holder.close()
    assert 0.3 <= elapsed < 5
    assert caught.value.retry_after_s >= 1
    assert "writer queue" in caught.value.details["cause"]
    assert "busy" in str(caught.value)
    engine.dispose()


def test_after_a_wait_in_the_queue_sqlite_may_wait_only_the_rest_of_the_timeout(db: Path) -> None:
    engine = _engine(db, busy_timeout_s=3.0)
    holder = _held(engine)
    seen: list[int] = []

    def write() -> None:
        with engine.begin() as conn:
            conn.execute(INSERT, {"n": 1})
            seen.append(conn.exec_driver_sql("PRAGMA busy_timeout").scalar_one())

    writer = threading.Thread(target=write)
    writer.start()
    time.sleep(0.5)
    holder.commit()
    holder.close()
    writer.join(LONG_S)
    assert seen and 0 < seen[0] <= 2500  # SQLite's own handler (another process) gets the rest
    with engine.begin() as conn:  # a write that did not wait has the whole timeout again
        conn.execute(INSERT, {"n": 2})
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar_one() == 3000
    engine.dispose()


def test_try_write_refuses_at_once_while_another_thread_holds_the_queue(
    engine: Engine,
) -> None:
    held, done = threading.Event(), threading.Event()

    def hold() -> None:
        with engine.begin() as conn:
            conn.execute(INSERT, {"n": -1})
            held.set()
            done.wait(LONG_S)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(LONG_S)
    started = time.monotonic()
    wrote = try_write(engine, lambda conn: conn.execute(INSERT, {"n": 1}) and None)
    elapsed = time.monotonic() - started
    done.set()
    holder.join(LONG_S)
    assert wrote is False
    assert elapsed < LONG_S / 2
    assert try_write(engine, lambda conn: conn.execute(INSERT, {"n": 2}) and None) is True
    assert _numbers(engine) == [-1, 2]


def test_two_engines_on_one_file_share_one_queue(engine: Engine, db: Path) -> None:
    other = _engine(db.parent / "." / ".." / db.parent.name / db.name)
    assert queue_for(str(db)) is queue_for(str(db.parent / "." / db.name))
    holder = _held(engine)
    threads = []
    for n in range(4):  # alternate engines: still first come, first served
        threads.append(_write_in_thread(other if n % 2 else engine, n))
        time.sleep(0.15)
    assert queue_for(str(db)).holder is not None
    holder.commit()
    holder.close()
    for thread in threads:
        thread.join(LONG_S)
    assert _numbers(engine) == [-1, 0, 1, 2, 3]
    other.dispose()


def test_a_second_write_in_one_transaction_does_not_queue_again(db: Path) -> None:
    engine = _engine(db, busy_timeout_s=0.5)
    with engine.begin() as conn:
        conn.execute(INSERT, {"n": 1})
        conn.exec_driver_sql("UPDATE t SET n = 2 WHERE n = 1")
        conn.execute(INSERT, {"n": 3})
    assert _numbers(engine) == [2, 3]
    engine.dispose()


@pytest.mark.parametrize(
    ("statement", "writes"),
    [
        ("INSERT INTO t VALUES (1)", True),
        ("  \n-- why\n/* a\nblock */ update t SET n = 1", True),
        ("Delete FROM t", True),
        ("REPLACE INTO t VALUES (1)", True),
        ("CREATE TABLE u (a)", True),
        ("drop table u", True),
        ("ALTER TABLE t ADD b", True),
        ("WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x", True),
        ("WITH x(a) AS (SELECT ')') DELETE FROM t WHERE n IN x", True),
        ("WITH x AS (DELETE FROM t RETURNING n) SELECT * FROM x", False),
        ("WITH x AS (SELECT 1) SELECT * FROM x", False),
        ("SELECT 'INSERT'", False),
        ("PRAGMA busy_timeout = 0", False),
        ("-- INSERT\nSELECT 1", False),
        ("", False),
    ],
)
def test_a_write_is_recognised_by_its_first_keyword(statement: str, writes: bool) -> None:
    assert is_write(statement) is writes


def test_memory_and_postgresql_engines_have_no_queue() -> None:
    memory = make_engine("sqlite://")
    assert queue_writers(memory, 1.0) is None
    with memory.begin() as conn:  # writes still work without one
        conn.exec_driver_sql("CREATE TABLE t (n)")
    assert queue_writers(create_engine("postgresql+psycopg://u@127.0.0.1/x"), 1.0) is None
