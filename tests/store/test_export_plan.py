"""The export reads a version's bodies without sorting them (issue 15, item 4).

Every statement the export runs is recorded at the DBAPI (SQLite's trace callback; psycopg
cursor classes that note their queries) and explained the way it ran: SQLite ``EXPLAIN QUERY
PLAN``; PostgreSQL ``EXPLAIN`` after ``ANALYZE`` (as autovacuum leaves a table after a bulk
load), through ``DECLARE … CURSOR`` for a statement that ran on a server-side cursor. No plan may
sort (a temp b-tree on SQLite, a ``Sort`` node on PostgreSQL) or scan every stored body."""

from __future__ import annotations

from typing import Any

import psycopg
from sqlalchemy import Engine, event

from benchbook.contracts import Dataset
from benchbook.datasets.identity import case_body
from benchbook.services import datasets as svc
from benchbook.services.context import Context
from benchbook.services.resolve import resolve_version
from benchbook.services.runs import iter_cases

N_CASES = 3000


class _Noted(psycopg.Cursor[Any]):
    def execute(self, query: Any, params: Any = None, **kw: Any) -> Any:
        self.connection.info_noted.append((False, query, params))  # type: ignore[attr-defined]
        return super().execute(query, params, **kw)


class _NotedServer(psycopg.ServerCursor[Any]):
    def execute(self, query: Any, params: Any = None, **kw: Any) -> Any:
        self.connection.info_noted.append((True, query, params))  # type: ignore[attr-defined]
        return super().execute(query, params, **kw)


def _record(engine: Engine) -> list[tuple[bool, str, Any]]:
    """``(server-side cursor?, SQL, params)`` of every statement run from now on."""
    noted: list[tuple[bool, str, Any]] = []

    @event.listens_for(engine, "checkout")
    def _trace(dbapi_conn: Any, _record: Any, _proxy: Any) -> None:
        if engine.dialect.name == "sqlite":
            dbapi_conn.set_trace_callback(lambda sql: noted.append((False, sql, None)))
        else:
            dbapi_conn.info_noted = noted
            dbapi_conn.cursor_factory = _Noted
            dbapi_conn.server_cursor_factory = _NotedServer

    return noted


def _plan(engine: Engine, server_side: bool, sql: str, params: Any) -> str:
    raw: Any = engine.raw_connection()
    try:
        cur = raw.cursor()
        if engine.dialect.name == "sqlite":
            rows = cur.execute(f"EXPLAIN QUERY PLAN {sql}").fetchall()
            return "\n".join(str(r[-1]) for r in rows)
        declare = "DECLARE bb_plan CURSOR FOR " if server_side else ""
        cur.execute(f"EXPLAIN {declare}{sql}", params)
        return "\n".join(r[0] for r in cur.fetchall())
    finally:
        raw.rollback()
        raw.close()


def _register_and_analyze(ctx: Context, engine: Engine) -> None:
    cases = [{"id": f"c{i}", "env": {"kind": "prompt"}, "task": f"{i}"} for i in range(N_CASES)]
    svc.register_dataset(
        ctx, Dataset.model_validate({"id": "d", "version": "1.0.0", "cases": cases})
    )
    if engine.dialect.name == "postgresql":
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql("ANALYZE")


def _assert_no_sort_or_scan_of_bodies(engine: Engine, noted: list[tuple[bool, str, Any]]) -> None:
    reads = [(s, sql, p) for s, sql, p in noted if "case_bodies" in str(sql)]
    assert reads, noted
    for server_side, sql, params in reads:
        plan = _plan(engine, server_side, str(sql), params)
        assert "TEMP B-TREE" not in plan, plan
        assert "Sort" not in plan, plan
        assert "Seq Scan on case_bodies" not in plan, plan
        assert "SCAN cb" not in plan, plan


def test_the_export_reads_bodies_by_key_in_order_without_sorting_them(
    ctx: Context, engine: Engine
) -> None:
    _register_and_analyze(ctx, engine)
    noted = _record(engine)
    exported = b"".join(svc.export_dataset(ctx, "d", "1.0.0"))
    assert exported.count(b"\n") == N_CASES
    _assert_no_sort_or_scan_of_bodies(engine, noted)


def test_a_runs_cases_are_read_like_the_export_without_sorting_bodies(
    ctx: Context, engine: Engine
) -> None:
    _register_and_analyze(ctx, engine)
    with engine.connect() as conn:
        pk = resolve_version(conn, ctx.workspace, "d", "1.0.0").pk
    exported = b"".join(svc.export_dataset(ctx, "d", "1.0.0")).splitlines()
    noted = _record(engine)
    with engine.connect() as conn:
        read = [(position, case) for position, case in iter_cases(conn, pk)]
    assert [p for p, _ in read] == list(range(N_CASES))
    assert [case_body(c) for _, c in read] == exported
    _assert_no_sort_or_scan_of_bodies(engine, noted)
