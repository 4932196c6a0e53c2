"""Content-addressed bodies under integer ids (migrations 0004, 0005): one body per hash, hashes
sharing a prefix keep both, concurrent PostgreSQL imports neither wait on each other nor store a
shared body twice, and existing data survives the migrations both ways. At the writers' real batch
sizes (issue 15 item 2), batches mixing new, stored and repeated bodies link every case to the one
body of its hash, and a failure after written batches rolls back to the stored data untouched."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import orjson
import pytest
from alembic import command
from sqlalchemy import Connection, Engine, func, select, text

from benchbook.contracts import Dataset
from benchbook.contracts.registry import RegisterResult
from benchbook.datasets.identity import dataset_meta, sha256_hex
from benchbook.services import datasets as svc
from benchbook.services.context import Context
from benchbook.store import datasets as repo
from benchbook.store.case_writes import BATCH_ROWS, PG_BATCH_ROWS, CaseRow
from benchbook.store.engine import alembic_config, make_engine, migrate
from benchbook.store.tables import case_bodies, dataset_versions, version_cases


def _version(conn: object, version: str) -> int:
    return repo.insert_version_header(
        conn,  # type: ignore[arg-type]
        workspace="default",
        dataset_id="ds",
        version=version,
        is_prerelease=False,
        description=None,
        tags=[],
        produced_by=None,
        created_by="t",
    )


def _numbered(case_id: str, n: int) -> CaseRow:
    body = orjson.dumps({"n": n})
    return case_id, body, sha256_hex(body)


def _hashes_in_order(conn: Connection, version_pk: int) -> list[str]:
    """A version's case hashes in case order (by id from the store, ordered by the page)."""
    by_id = dict(p for ps in repo.case_hashes_by_id(conn, version_pk) for p in ps)
    return [by_id[case_id] for _, case_id, _ in repo.case_page(conn, version_pk, None, 10**7)]


def test_two_hashes_sharing_their_first_eight_bytes_are_both_stored_and_read_back(
    engine: Engine,
) -> None:
    prefix = "ab" * 8  # the same first 8 bytes (what migration 0004 indexed as hash_key)
    h1, h2 = prefix + "1" * 48, prefix + "2" * 48
    rows = [("a", b'{"n":1}', h1), ("b", b'{"n":2}', h2)]
    with engine.begin() as conn:
        pk = _version(conn, "1.0.0")
        assert list(repo.write_cases(conn, pk, iter(rows))) == [h1, h2]
        pk2 = _version(conn, "2.0.0")  # the same two hashes again: nothing new is stored
        list(repo.write_cases(conn, pk2, iter([("b", b'{"n":2}', h2), ("a", b'{"n":1}', h1)])))
    with engine.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(case_bodies)) == 2
        assert [(p, c, b) for p, c, b in repo.case_page(conn, pk, None, 10)] == [
            (0, "a", b'{"n":1}'),
            (1, "b", b'{"n":2}'),
        ]
        assert _hashes_in_order(conn, pk2) == [h2, h1]
        first, second = repo.body_index(conn, pk), repo.body_index(conn, pk2)
    assert first["a"][1] == second["a"][1] != first["b"][1] == second["b"][1]


def test_a_body_repeated_inside_one_import_is_stored_once(engine: Engine) -> None:
    h = "cd" * 32
    with engine.begin() as conn:
        pk = _version(conn, "1.0.0")
        list(repo.write_cases(conn, pk, iter([(str(i), b"{}", h) for i in range(5)])))
    with engine.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(case_bodies)) == 1
        assert conn.scalar(select(func.count(func.distinct(version_cases.c.body_id)))) == 1


def test_batches_mixing_stored_and_new_bodies_link_every_case_to_its_one_body(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SQLite writer inserts a batch of new bodies without looking them up first and falls back
    to a look-up when some were stored: every case still points at the one body of its hash."""
    from benchbook.store import case_writes

    monkeypatch.setattr(case_writes, "BATCH_ROWS", 3)

    first = [_numbered(f"a{n}", n) for n in range(5)]
    # batches of 3: all new | one stored among new | all new again | stored twice, repeated
    numbers = [10, 11, 12, 1, 13, 14, 15, 16, 17, 3, 3, 18]
    second = [_numbered(f"b{i}", n) for i, n in enumerate(numbers)]
    with engine.begin() as conn:
        pk = _version(conn, "1.0.0")
        list(repo.write_cases(conn, pk, iter(first)))
        pk2 = _version(conn, "2.0.0")
        assert list(repo.write_cases(conn, pk2, iter(second))) == [h for _, _, h in second]
    with engine.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(case_bodies)) == 5 + 9
        assert _hashes_in_order(conn, pk2) == [h for _, _, h in second]
        pages = repo.case_page(conn, pk2, None, 100)
        assert [(c, orjson.loads(b)["n"]) for _, c, b in pages] == [
            (f"b{i}", n) for i, n in enumerate(numbers)
        ]
        before, after = repo.body_index(conn, pk), repo.body_index(conn, pk2)
    assert (
        after["b3"][1] == before["a1"][1] and after["b9"][1] == after["b10"][1] == before["a3"][1]
    )


@pytest.fixture
def old_schema(empty_database_url: str) -> Iterator[Engine]:
    """A database at revision 0003 (hash-keyed bodies) holding one version of two cases."""
    eng = make_engine(empty_database_url)
    command.upgrade(alembic_config(eng), "0003")
    with eng.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO workspaces (id, name, created_at)"
                " VALUES ('default', 'Default', CURRENT_TIMESTAMP)"
            )
        )
        conn.execute(
            text(
                "INSERT INTO dataset_versions (pk, workspace, dataset_id, version, is_prerelease,"
                " tags, content_hash, case_count, created_by, created_at) VALUES"
                " (1, 'default', 'ds', '1.0.0', false, '[]', 'x', 2, 't', CURRENT_TIMESTAMP)"
            )
        )
        conn.execute(
            text("INSERT INTO case_bodies (hash, body) VALUES (:h1, :b1), (:h2, :b2)"),
            {"h1": "ff" * 32, "b1": '{"n":1}', "h2": "01" * 32, "b2": "{}"},
        )
        conn.execute(
            text(
                "INSERT INTO version_cases (version_pk, position, case_id, case_hash)"
                " VALUES (1, 0, 'a', :h1), (1, 1, 'b', :h2)"
            ),
            {"h1": "ff" * 32, "h2": "01" * 32},
        )
    yield eng
    eng.dispose()


def test_stored_cases_survive_the_migration_to_integer_ids_and_back(old_schema: Engine) -> None:
    migrate(old_schema)
    with old_schema.connect() as conn:
        assert repo.case_page(conn, 1, None, 10) == [(0, "a", b'{"n":1}'), (1, "b", b"{}")]
        assert _hashes_in_order(conn, 1) == ["ff" * 32, "01" * 32]
    command.downgrade(alembic_config(old_schema), "0004")
    with old_schema.connect() as conn:
        keys = dict(conn.execute(text("SELECT hash, hash_key FROM case_bodies")).all())
    assert keys == {"ff" * 32: -1, "01" * 32: 0x0101010101010101}
    command.downgrade(alembic_config(old_schema), "0003")
    with old_schema.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT vc.case_id, cb.body FROM version_cases vc"
                " JOIN case_bodies cb ON cb.hash = vc.case_hash ORDER BY vc.position"
            )
        ).all()
    assert [tuple(r) for r in rows] == [("a", '{"n":1}'), ("b", "{}")]


def test_a_body_stored_twice_before_migration_0005_is_merged_onto_one_row(
    empty_database_url: str,
) -> None:
    eng = make_engine(empty_database_url)
    command.upgrade(alembic_config(eng), "0004")
    h = "ee" * 32
    with eng.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO workspaces (id, name, created_at)"
                " VALUES ('default', 'Default', CURRENT_TIMESTAMP)"
            )
        )
        conn.execute(
            text(
                "INSERT INTO dataset_versions (pk, workspace, dataset_id, version, is_prerelease,"
                " tags, content_hash, case_count, created_by, created_at) VALUES"
                " (1, 'default', 'ds', '1.0.0', false, '[]', 'x', 2, 't', CURRENT_TIMESTAMP)"
            )
        )
        conn.execute(
            text(
                "INSERT INTO case_bodies (id, hash_key, hash, body)"
                " VALUES (7, -1, :h, '{}'), (9, -1, :h, '{}')"
            ),
            {"h": h},
        )
        conn.execute(
            text(
                "INSERT INTO version_cases (version_pk, position, case_id, body_id)"
                " VALUES (1, 0, 'a', 9), (1, 1, 'b', 7)"
            )
        )
    migrate(eng)
    with eng.connect() as conn:
        assert conn.execute(select(case_bodies.c.id, case_bodies.c.hash)).all() == [(7, h)]
        assert _hashes_in_order(conn, 1) == [h, h]
        assert repo.case_page(conn, 1, None, 10) == [(0, "a", b"{}"), (1, "b", b"{}")]
    eng.dispose()


# --- concurrent PostgreSQL imports ------------------------------------------------------------

_WAIT_S = 30.0


def _case_rows(dataset_id: str, count: int, shared: str | None = None) -> list[CaseRow]:
    """``count`` distinct cases of ``dataset_id``; a ``shared`` case id becomes the first case,
    with a body equal in every dataset."""
    ids = [f"{dataset_id}-{i}" for i in range(count)]
    if shared is not None:
        ids[0] = shared
    bodies = [orjson.dumps({"id": i, "task": "shared" if i == shared else i}) for i in ids]
    return [(i, body, sha256_hex(body)) for i, body in zip(ids, bodies, strict=True)]


def _held_after_first_batch(
    rows: list[CaseRow], written: threading.Event, release: threading.Event
) -> Iterator[CaseRow]:
    """Yield ``rows``; once the writer has merged its first batch, signal and wait for release."""
    for i, row in enumerate(rows):
        if i == PG_BATCH_ROWS:  # the writer flushed rows [0, PG_BATCH_ROWS) before asking
            written.set()
            assert release.wait(_WAIT_S), "the test never released import a"
        yield row


def _meta(dataset_id: str) -> dict[str, object]:
    return dataset_meta(Dataset.model_validate({"id": dataset_id, "version": "1.0.0"}))


def _start_a(
    ctx: Context, rows: list[CaseRow], release: threading.Event
) -> tuple[threading.Thread, list[object]]:
    """Import ``a`` in a thread held open after its first batch; its outcome lands in the list."""
    written, outcome = threading.Event(), []

    def run() -> None:
        try:
            it = _held_after_first_batch(rows, written, release)
            outcome.append(svc.store_version(ctx, "a", "1.0.0", _meta("a"), it))
        except BaseException as exc:  # reported by the test thread
            outcome.append(exc)
            written.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert written.wait(_WAIT_S), "import a never wrote its first batch"
    assert not outcome, f"import a ended early: {outcome}"
    return thread, outcome


def _read_back(ctx: Context, dataset_id: str, rows: list[CaseRow]) -> None:
    exported = b"".join(svc.export_dataset(ctx, dataset_id, "1.0.0")).splitlines()
    assert [orjson.loads(line)["id"] for line in exported] == [case_id for case_id, _, _ in rows]
    with ctx.engine.connect() as conn:
        pk = repo.find_version(conn, "default", dataset_id, "1.0.0")
        assert pk is not None
        assert _hashes_in_order(conn, pk.pk) == [h for _, _, h in rows]


def test_two_postgresql_imports_of_different_bodies_run_at_the_same_time(
    backend: str, ctx: Context
) -> None:
    if backend != "postgresql":
        pytest.skip("SQLite serializes writers by design: one write transaction at a time")
    rows_a, rows_b = _case_rows("a", PG_BATCH_ROWS + 5), _case_rows("b", 50)
    release = threading.Event()
    thread_a, outcome_a = _start_a(ctx, rows_a, release)
    try:
        with ThreadPoolExecutor(1) as pool:
            # b must finish while a is still open: no import-wide lock is held.
            done_b = pool.submit(svc.store_version, ctx, "b", "1.0.0", _meta("b"), iter(rows_b))
            assert done_b.result(timeout=_WAIT_S).created
        assert thread_a.is_alive() and not outcome_a
    finally:
        release.set()
        thread_a.join(_WAIT_S)
    assert isinstance(outcome_a[0], RegisterResult) and outcome_a[0].created
    _read_back(ctx, "a", rows_a)
    _read_back(ctx, "b", rows_b)


def test_two_postgresql_imports_sharing_a_new_body_store_it_once(
    backend: str, ctx: Context
) -> None:
    if backend != "postgresql":
        pytest.skip("SQLite serializes writers by design: one write transaction at a time")
    rows_a = _case_rows("a", PG_BATCH_ROWS + 5, "shared")
    rows_b = _case_rows("b", 50, "shared")
    assert rows_a[0] == rows_b[0]
    release = threading.Event()
    thread_a, outcome_a = _start_a(ctx, rows_a, release)
    try:
        with ThreadPoolExecutor(1) as pool:
            done_b = pool.submit(svc.store_version, ctx, "b", "1.0.0", _meta("b"), iter(rows_b))
            release.set()  # b waits on a's uncommitted insert of the shared body until a ends
            assert done_b.result(timeout=_WAIT_S).created
    finally:
        release.set()
        thread_a.join(_WAIT_S)
    assert isinstance(outcome_a[0], RegisterResult) and outcome_a[0].created
    with ctx.engine.connect() as conn:
        count = select(func.count()).where(case_bodies.c.hash == rows_a[0][2])
        assert conn.scalar(count) == 1
        assert conn.scalar(select(func.count()).select_from(case_bodies)) == len(rows_a) + 49
    _read_back(ctx, "a", rows_a)
    _read_back(ctx, "b", rows_b)


def _links(conn: Connection, pk: int) -> list[tuple[str, int]]:
    """``(case_id, n of its body)`` in position order."""
    rows = conn.execute(
        select(version_cases.c.case_id, case_bodies.c.body)
        .join(case_bodies, case_bodies.c.id == version_cases.c.body_id)
        .where(version_cases.c.version_pk == pk)
        .order_by(version_cases.c.position)
    )
    return [(case_id, orjson.loads(body)["n"]) for case_id, body in rows]


def _count(conn: Connection, table: object) -> int:
    return int(conn.scalar(select(func.count()).select_from(table)))  # type: ignore[arg-type]


def _numbers(backend: str) -> list[int]:
    """Body numbers of a second version, by writer batch: all new but stored ones and a repeat |
    half stored, half new | all new again | all stored."""
    size = PG_BATCH_ROWS if backend == "postgresql" else BATCH_ROWS
    first = [100_000 + i for i in range(size)]
    first[7], first[size // 2], first[-1] = 3, 5, first[0]
    second = [i if i % 2 else 200_000 + i for i in range(size)]
    third = [300_000 + i for i in range(size)]
    return first + second + third + list(range(size // 3))


def test_batches_mixing_new_stored_and_repeated_bodies_link_each_case_to_its_one_body(
    backend: str, engine: Engine
) -> None:
    size = PG_BATCH_ROWS if backend == "postgresql" else BATCH_ROWS
    stored = [_numbered(f"a{n}", n) for n in range(size)]
    numbers = _numbers(backend)
    second = [_numbered(f"b{i}", n) for i, n in enumerate(numbers)]
    with engine.begin() as conn:
        pk = _version(conn, "1.0.0")
        list(repo.write_cases(conn, pk, iter(stored)))
        pk2 = _version(conn, "2.0.0")
        assert list(repo.write_cases(conn, pk2, iter(second))) == [h for _, _, h in second]
    with engine.connect() as conn:
        assert _links(conn, pk2) == [(f"b{i}", n) for i, n in enumerate(numbers)]
        assert _count(conn, case_bodies) == len(set(numbers) | set(range(size)))
        before, after = repo.body_index(conn, pk), repo.body_index(conn, pk2)
    assert after["b7"][1] == before["a3"][1] and after[f"b{size + 1}"][1] == before["a1"][1]
    assert after[f"b{size - 1}"][1] == after["b0"][1]


def _failing_after(rows: list[CaseRow], n: int) -> Iterator[CaseRow]:
    for i, row in enumerate(rows):
        if i == n:
            raise RuntimeError("the source broke")
        yield row


def test_a_failure_after_written_batches_rolls_back_to_the_stored_data(
    backend: str, engine: Engine
) -> None:
    size = PG_BATCH_ROWS if backend == "postgresql" else BATCH_ROWS
    stored = [_numbered(f"a{n}", n) for n in range(50)]
    with engine.begin() as conn:
        pk = _version(conn, "1.0.0")
        list(repo.write_cases(conn, pk, iter(stored)))
    with engine.connect() as conn:
        bodies_before = conn.execute(select(case_bodies).order_by(case_bodies.c.id)).all()
    rows = [_numbered(f"b{i}", i) for i in range(3 * size)]  # 50 of them stored already
    with pytest.raises(RuntimeError, match="the source broke"), engine.begin() as conn:
        pk2 = _version(conn, "2.0.0")
        list(repo.write_cases(conn, pk2, _failing_after(rows, 2 * size + 7)))
    with engine.connect() as conn:
        assert conn.execute(select(case_bodies).order_by(case_bodies.c.id)).all() == bodies_before
        assert _count(conn, version_cases) == 50 and _count(conn, dataset_versions) == 1
        assert _links(conn, pk) == [(f"a{n}", n) for n in range(50)]


def _stage_table(conn: Connection) -> object:
    return conn.scalar(text("SELECT to_regclass('pg_temp.bb_stage_bodies')"))


def test_postgresql_copies_new_bodies_straight_in_and_stages_only_after_a_conflict(
    backend: str, engine: Engine
) -> None:
    """New bodies go in by one ``COPY`` (no staging table, no ``ON CONFLICT`` insert: ~0.6 s of
    a 100k import); a batch with a stored body is rolled back to its savepoint and staged,
    leaving what the transaction wrote before intact."""
    if backend != "postgresql":
        pytest.skip("the staging table is PostgreSQL's")
    first = [_numbered(f"a{n}", n) for n in range(PG_BATCH_ROWS + 3)]
    second = [_numbered(f"b{n}", n) for n in (7, 900_001, PG_BATCH_ROWS + 1)]
    with engine.begin() as conn:
        pk = _version(conn, "1.0.0")
        list(repo.write_cases(conn, pk, iter(first)))
        assert _stage_table(conn) is None
        pk2 = _version(conn, "2.0.0")
        list(repo.write_cases(conn, pk2, iter(second)))
        assert _stage_table(conn) is not None
    with engine.connect() as conn:
        assert _links(conn, pk) == [(f"a{n}", n) for n in range(PG_BATCH_ROWS + 3)]
        assert _links(conn, pk2) == [
            ("b7", 7),
            ("b900001", 900_001),
            (f"b{PG_BATCH_ROWS + 1}", PG_BATCH_ROWS + 1),
        ]
        assert _count(conn, case_bodies) == PG_BATCH_ROWS + 4
        before, after = repo.body_index(conn, pk), repo.body_index(conn, pk2)
    assert after["b7"][1] == before["a7"][1]


def test_postgresql_bodies_keep_their_characters_under_another_client_encoding(
    backend: str, engine: Engine
) -> None:
    """Bodies are sent as text the driver encodes in the client encoding, so one that is not
    UTF-8 stores the same characters (raw UTF-8 bytes sent under LATIN1 would store 'cafÃ©')."""
    if backend != "postgresql":
        pytest.skip("client encodings are PostgreSQL's")
    body = orjson.dumps({"id": "x", "task": "café"})
    with engine.begin() as conn:
        conn.exec_driver_sql("SET LOCAL client_encoding TO 'LATIN1'")
        pk = _version(conn, "1.0.0")
        list(repo.write_cases(conn, pk, iter([("x", body, sha256_hex(body))])))
        conn.exec_driver_sql("SET LOCAL client_encoding TO 'UTF8'")
    with engine.connect() as conn:
        assert repo.case_page(conn, pk, None, 10) == [(0, "x", body)]
