"""Alembic migrations: they build the schema from nothing, re-run safely, and match tables.py."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Column, Engine, Integer, MetaData, String, Table, func, inspect, select

from benchbook.store.engine import alembic_config, head_revision, make_engine, migrate
from benchbook.store.tables import DEFAULT_WORKSPACE, SHARED_WORKSPACE, metadata, workspaces


@pytest.fixture
def empty_engine(empty_database_url: str) -> Iterator[Engine]:
    """An engine on a database without any table."""
    eng = make_engine(empty_database_url)
    yield eng
    eng.dispose()


def _head(engine: Engine) -> str:
    head = ScriptDirectory.from_config(alembic_config(engine)).get_current_head()
    assert head is not None
    return head


def _revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def _diff(engine: Engine, target: MetaData) -> list[object]:
    with engine.connect() as conn:
        ctx = MigrationContext.configure(
            conn, opts={"compare_type": True, "compare_server_default": True}
        )
        return list(compare_metadata(ctx, target))


def test_the_head_read_without_alembic_is_alembics_head(empty_engine: Engine) -> None:
    assert head_revision() == _head(empty_engine)


def test_migrate_at_head_still_restores_a_missing_workspace_and_a_step_back(
    empty_engine: Engine,
) -> None:
    """The no-Alembic fast path of ``migrate`` runs only when nothing is left to do."""
    migrate(empty_engine)
    with empty_engine.begin() as conn:
        conn.execute(workspaces.delete().where(workspaces.c.id == SHARED_WORKSPACE))
    migrate(empty_engine)
    with empty_engine.connect() as conn:
        assert set(conn.scalars(select(workspaces.c.id))) == {DEFAULT_WORKSPACE, SHARED_WORKSPACE}
    command.downgrade(alembic_config(empty_engine), "-1")
    assert _revision(empty_engine) != _head(empty_engine)
    migrate(empty_engine)
    assert _revision(empty_engine) == _head(empty_engine)


def test_the_migration_builds_every_table_on_an_empty_database(empty_engine: Engine) -> None:
    assert inspect(empty_engine).get_table_names() == []
    migrate(empty_engine)
    tables = set(inspect(empty_engine).get_table_names())
    assert set(metadata.tables) <= tables
    assert tables - set(metadata.tables) == {"alembic_version"}
    assert _revision(empty_engine) == _head(empty_engine)


def test_migrating_twice_changes_nothing(empty_engine: Engine) -> None:
    migrate(empty_engine)
    with empty_engine.connect() as conn:
        first = sorted(conn.execute(select(workspaces.c.id, workspaces.c.created_at)))
    migrate(empty_engine)
    with empty_engine.connect() as conn:
        second = sorted(conn.execute(select(workspaces.c.id, workspaces.c.created_at)))
        versions = conn.scalar(select(func.count()).select_from(workspaces))
    assert first == second
    assert [ws for ws, _ in second] == sorted([DEFAULT_WORKSPACE, SHARED_WORKSPACE])
    assert versions == 2
    assert _revision(empty_engine) == _head(empty_engine)


def test_the_migrated_schema_matches_the_table_definitions(empty_engine: Engine) -> None:
    # A table change in tables.py without a migration (or the reverse) fails here.
    migrate(empty_engine)
    assert _diff(empty_engine, metadata) == []


def _add_table(md: MetaData) -> None:
    Table("not_migrated", md, Column("pk", Integer, primary_key=True))


def _add_column(md: MetaData) -> None:
    md.tables["case_bodies"].append_column(Column("size_bytes", Integer))


def _widen_column(md: MetaData) -> None:
    md.tables["version_tags"].c.tag.type = String(80)


def _drop_index(md: MetaData) -> None:
    table = md.tables["version_cases"]
    table.indexes.discard(next(i for i in table.indexes if i.name == "ix_version_cases_case_id"))


@pytest.mark.parametrize(
    ("drift", "kind"),
    [
        (_add_table, "add_table"),
        (_add_column, "add_column"),
        (_widen_column, "modify_type"),
        (_drop_index, "remove_index"),
    ],
)
def test_the_schema_check_notices_a_table_change_without_a_migration(
    empty_engine: Engine, drift: Callable[[MetaData], None], kind: str
) -> None:
    migrate(empty_engine)
    drifted = MetaData()
    for table in metadata.tables.values():
        table.to_metadata(drifted)
    drift(drifted)
    found = [d[0][0] if isinstance(d, list) else d[0] for d in _diff(empty_engine, drifted)]
    assert found == [kind]


def test_the_migrations_downgrade_to_nothing_and_upgrade_again(empty_engine: Engine) -> None:
    migrate(empty_engine)
    command.downgrade(alembic_config(empty_engine), "base")
    assert set(inspect(empty_engine).get_table_names()) <= {"alembic_version"}
    migrate(empty_engine)
    assert _diff(empty_engine, metadata) == []
