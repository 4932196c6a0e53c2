"""Content-addressed bodies under integer ids (migration 0004): one body per hash, a hash key
shared by two hashes keeps both, and existing data survives the migration both ways."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from alembic import command
from sqlalchemy import Engine, func, select, text

from benchbook.store import datasets as repo
from benchbook.store.engine import alembic_config, make_engine, migrate
from benchbook.store.tables import case_bodies, version_cases


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


def test_two_hashes_sharing_a_hash_key_are_both_stored_and_read_back(engine: Engine) -> None:
    prefix = "ab" * 8  # the same first 8 bytes, so the same hash_key
    h1, h2 = prefix + "1" * 48, prefix + "2" * 48
    assert repo.hash_key(h1) == repo.hash_key(h2)
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
        assert list(repo.iter_case_hashes(conn, pk2)) == [h2, h1]
        first, second = repo.body_index(conn, pk), repo.body_index(conn, pk2)
    assert first["a"][1] == second["a"][1] != first["b"][1] == second["b"][1]


def test_a_hash_key_is_the_signed_first_eight_bytes() -> None:
    assert repo.hash_key("00" * 7 + "01" + "f" * 48) == 1
    assert repo.hash_key("ff" * 8 + "0" * 48) == -1
    assert repo.hash_key("80" + "00" * 7 + "0" * 48) == -(1 << 63)


def test_a_body_repeated_inside_one_import_is_stored_once(engine: Engine) -> None:
    h = "cd" * 32
    with engine.begin() as conn:
        pk = _version(conn, "1.0.0")
        list(repo.write_cases(conn, pk, iter([(str(i), b"{}", h) for i in range(5)])))
    with engine.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(case_bodies)) == 1
        assert conn.scalar(select(func.count(func.distinct(version_cases.c.body_id)))) == 1


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
        assert list(repo.iter_case_hashes(conn, 1)) == ["ff" * 32, "01" * 32]
        keys = dict(conn.execute(select(case_bodies.c.hash, case_bodies.c.hash_key)).all())
    assert keys == {"ff" * 32: -1, "01" * 32: repo.hash_key("01" * 32)}
    command.downgrade(alembic_config(old_schema), "0003")
    with old_schema.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT vc.case_id, cb.body FROM version_cases vc"
                " JOIN case_bodies cb ON cb.hash = vc.case_hash ORDER BY vc.position"
            )
        ).all()
    assert [tuple(r) for r in rows] == [("a", '{"n":1}'), ("b", "{}")]
