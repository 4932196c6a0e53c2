"""Shared fixtures: a migrated engine on SQLite (always) and PostgreSQL (when configured).

``BENCHBOOK_TEST_DATABASE_URL`` names a PostgreSQL server database to create test databases
from (for example ``postgresql://postgres@127.0.0.1:5432/test``). Under ``CI=true`` a missing or
unreachable PostgreSQL is a failure, not a skip. The same goes for ``../shared/data``.
"""

from __future__ import annotations

import importlib
import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest
from sqlalchemy import Engine, create_engine, text

from benchbook.services.context import Context, local_admin_context
from benchbook.settings import Settings
from benchbook.store.engine import make_engine, migrate, normalize_url, seed_workspaces

pytest_plugins = ["tests.hfserver.fixtures", "tests.openaiserver.fixtures", "tests.repo_bundles"]

IN_CI = os.environ.get("CI", "").lower() == "true"
PG_URL = os.environ.get("BENCHBOOK_TEST_DATABASE_URL", "")
SHARED_DATA = Path(
    os.environ.get(
        "BENCHBOOK_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data"
    )
)


def _need(reason: str) -> None:
    if IN_CI:
        pytest.fail(f"{reason} (required under CI=true)")
    pytest.skip(reason)


def import_or_need(name: str) -> ModuleType:
    """``import name``; when it is missing, skip the calling module locally and fail under
    ``CI=true`` (``pytest.importorskip`` would hide a broken install in CI)."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        reason = f"{name} is not importable ({exc}); install the dev extra"
        if IN_CI:
            pytest.fail(f"{reason} (required under CI=true)", pytrace=False)
        pytest.skip(reason, allow_module_level=True)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real benchmark files of ``../shared/data`` (skip locally when absent; fail in CI)."""
    if not (SHARED_DATA / "MANIFEST.md").exists():
        _need(f"shared benchmark data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def pg_database_url() -> Iterator[str]:
    """A fresh PostgreSQL database for this test session, dropped at the end."""
    if not PG_URL:
        _need("BENCHBOOK_TEST_DATABASE_URL is not set; PostgreSQL tests skipped")
    admin_url = normalize_url(PG_URL)
    name = f"bb_test_{uuid.uuid4().hex[:10]}"
    try:
        admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:
        _need(f"PostgreSQL at {PG_URL} is unreachable: {exc}")
    url = admin_url.rsplit("/", 1)[0] + "/" + name
    engine = make_engine(url)
    migrate(engine)
    engine.dispose()
    yield url
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request: pytest.FixtureRequest) -> str:
    """The storage backend under test."""
    return str(request.param)


@pytest.fixture
def database_url(backend: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """A database URL for the backend: a fresh SQLite file, or the session's PostgreSQL."""
    if backend == "sqlite":
        path = tmp_path / "benchbook.db"
        shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
        return f"sqlite:///{path}"
    url: str = request.getfixturevalue("pg_database_url")
    return url


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file migrated to head once per session (its WAL checkpointed into the file):
    :func:`database_url` copies it for each test, where migrating a new file would run every
    Alembic migration again (~0.3 s a test, quiet machine). Migrations themselves are tested on
    :func:`empty_database_url`."""
    path = tmp_path_factory.mktemp("template") / "benchbook.db"
    eng = make_engine(f"sqlite:///{path}")
    migrate(eng)
    with eng.connect() as conn:
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    eng.dispose()
    return path


@pytest.fixture
def engine(database_url: str, backend: str) -> Iterator[Engine]:
    """A migrated engine with empty tables (PostgreSQL tables are cleared before each test)."""
    eng = make_engine(database_url)
    if backend == "postgresql":
        _clear_postgresql(eng)
    migrate(eng)
    yield eng
    eng.dispose()


def _clear_postgresql(eng: Engine) -> None:
    """Empty every table of the session's database, workspaces too (a workspace a previous test
    created must not leak into the next one), then seed ``default`` and ``_shared`` as
    :func:`migrate` does, so its check finds the database at head and skips Alembic.

    ``DELETE`` with foreign-key triggers off (``session_replication_role``): ~10× faster than
    ``TRUNCATE … CASCADE`` of every table, which makes new files for each (measured ~0.8 s vs
    ~0.1 s a test under load); sequences keep counting either way."""
    with eng.begin() as conn:
        tables = conn.scalars(
            text(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
                "AND tablename <> 'alembic_version'"
            )
        ).all()
        conn.execute(text("SET LOCAL session_replication_role = replica"))
        for table in tables:
            conn.execute(text(f'DELETE FROM "{table}"'))
        conn.execute(text("SET LOCAL session_replication_role = origin"))
        seed_workspaces(conn)


@pytest.fixture
def settings(tmp_path: Path, database_url: str) -> Settings:
    """Settings pointing at the test database and a temporary home."""
    return Settings(home=tmp_path / "home", database_url=database_url)


@pytest.fixture
def ctx(engine: Engine, settings: Settings) -> Context:
    """The local admin of the ``default`` workspace."""
    return local_admin_context(engine, settings)


@pytest.fixture
def empty_database_url(backend: str, tmp_path: Path) -> Iterator[str]:
    """A database with no tables at all (for migration tests); PostgreSQL's is dropped after."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'empty.db'}"
        return
    if not PG_URL:
        _need("BENCHBOOK_TEST_DATABASE_URL is not set; PostgreSQL tests skipped")
    admin = create_engine(normalize_url(PG_URL), isolation_level="AUTOCOMMIT")
    name = f"bb_empty_{uuid.uuid4().hex[:10]}"
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:
        _need(f"PostgreSQL at {PG_URL} is unreachable: {exc}")
    yield normalize_url(PG_URL).rsplit("/", 1)[0] + "/" + name
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


# --- scheduling across xdist workers ----------------------------------------------------------

#: Test files that take minutes, longest first (measured with ``--durations``: the docs
#: examples ~21 min of one worker under load, schemathesis ~9, run transport parity ~4, the
#: page walks and browser suites 1-4). Each of the first three is split per test across the
#: workers; all of them are handed out before anything else, so no long unit starts last and
#: leaves one worker idle (longest-processing-time-first scheduling).
HEAVY_FIRST = (
    "tests/docs/test_examples.py",
    "tests/api/test_schemathesis.py",
    "tests/test_run_transport_parity.py",
    "tests/web/test_pages.py",
    "tests/web/test_keyboard.py",
    "tests/web/test_import_wizard.py",
    "tests/eval/test_ray_executor.py",
    "tests/services/test_run_leases.py",
)
SPLIT_PER_TEST = HEAVY_FIRST[:3]


# --- which tests run on PostgreSQL too ------------------------------------------------------

#: Where every backend-parametrized test runs on both backends: the layers that write and read
#: SQL (store, services, dataset building, localization, evaluation). Above them, the
#: transports (HTTP API, CLI, Python client, MCP, web, docs) are one service core seen through
#: another door: their tests run on SQLite, the embedded default, and on PostgreSQL only in
#: modules marked ``both_backends`` (schemathesis's stateful fuzzing, streaming export, import
#: jobs, data fidelity, the CLI import, one page walk in Chromium over a PostgreSQL server).
#: ``BENCHBOOK_TEST_BACKENDS=all`` runs every transport test on both.
BOTH_BACKENDS_UNDER = (
    "tests/store/",
    "tests/services/",
    "tests/datasets/",
    "tests/localization/",
    "tests/eval/",
)
ALL_BACKENDS = os.environ.get("BENCHBOOK_TEST_BACKENDS", "").lower() == "all"
BACKEND_PARAMS = ("backend", "web_database")


def on_postgresql(item: pytest.Item) -> bool:
    """Whether ``item`` is the PostgreSQL variant of a backend-parametrized test."""
    params = getattr(item, "callspec", None)
    return params is not None and any(
        params.params.get(name) == "postgresql" for name in BACKEND_PARAMS
    )


def transport_only_on_sqlite(item: pytest.Item) -> bool:
    """Whether the policy of :data:`BOTH_BACKENDS_UNDER` leaves ``item`` out: a PostgreSQL
    variant in a transport module not marked ``both_backends``."""
    return (
        not ALL_BACKENDS
        and on_postgresql(item)
        and not item.nodeid.startswith(BOTH_BACKENDS_UNDER)
        and item.get_closest_marker("both_backends") is None
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect what :func:`transport_only_on_sqlite` leaves out (pytest reports them as
    deselected), then order the files of :data:`HEAVY_FIRST` first, in its order (a stable
    sort: the rest keep their collection order; so does every file's own order)."""
    dropped = [item for item in items if transport_only_on_sqlite(item)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        gone = set(map(id, dropped))
        items[:] = [item for item in items if id(item) not in gone]
    rank = {name: i for i, name in enumerate(HEAVY_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """``--dist loadfile`` with two changes: the files of :data:`SPLIT_PER_TEST` are split per
    test, and work units go out in collection order (see
    :func:`pytest_collection_modifyitems`) instead of by their number of tests."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling  # type: ignore[import-untyped]

    class HeavyFirst(LoadFileScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return nodeid if path in SPLIT_PER_TEST else path

    config.option.loadscopereorder = False
    return HeavyFirst(config, log)


def _no_child_left() -> bool:
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


@pytest.fixture
def no_child_left() -> Callable[[], bool]:
    """A check: True when this process has no child process left, running or unreaped (the
    import's row worker is stopped and reaped however its stream ends)."""
    return _no_child_left
