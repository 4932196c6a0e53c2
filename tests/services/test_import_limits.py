"""Issue 27: a 4 MB gzip of valid rows made an import write ~100 GB for hours, and a cancel did not
give the space back. An import now stores at most ``import_max_rows`` cases and
``import_max_bytes`` bytes of case bodies: past either it stops with an error naming the setting
and the line where it tripped, and nothing is stored (413). On SQLite a failed or cancelled import
also truncates the write-ahead log its rolled-back rows had filled. SQLite and PostgreSQL."""

from __future__ import annotations

import gzip
import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from benchbook.errors import InvalidInput, PayloadTooLarge
from benchbook.services import datasets as ds
from benchbook.services import imports as svc
from benchbook.services.context import Context, local_admin_context
from benchbook.settings import Settings
from benchbook.store.engine import make_engine, migrate

SPEC = {"id": "bomb", "source": {"kind": "file", "format": "jsonl"}, "mapping": {"task_field": "q"}}


def _limited(ctx: Context, **limits: Any) -> Context:
    return Context(ctx.principal, ctx.engine, ctx.settings.model_copy(update=limits))


def _rows(n: int, size: int = 10, noise: bool = False) -> bytes:
    def text(i: int) -> str:
        return f"{i} " + (os.urandom(size // 2).hex() if noise else "x" * size)

    return b"".join(orjson.dumps({"q": text(i)}) + b"\n" for i in range(n))


def _import(ctx: Context, path: Path) -> Any:
    request = svc.parse_import_request({"spec": SPEC})
    return svc.import_benchmark(ctx, request, path)


def test_an_import_past_its_row_bound_names_the_setting_and_line_and_stores_nothing(
    ctx: Context, tmp_path: Path
) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(_rows(5))
    with pytest.raises(PayloadTooLarge) as caught:
        _import(_limited(ctx, import_max_rows=3), path)
    message = caught.value.message
    assert "import_max_rows" in message and "3" in message and "line 4" in message, message
    assert ds.list_datasets(ctx).total == 0
    assert _import(_limited(ctx, import_max_rows=5), path).cases == 5


def test_a_small_gzip_of_large_rows_stops_at_the_byte_bound_and_stores_nothing(
    ctx: Context, tmp_path: Path
) -> None:
    path = tmp_path / "bomb.jsonl.gz"
    path.write_bytes(gzip.compress(_rows(2000, size=20_000), compresslevel=9))  # 40 MB of rows
    assert path.stat().st_size < 1 << 20
    with pytest.raises(PayloadTooLarge) as caught:
        _import(_limited(ctx, import_max_bytes=1 << 20), path)
    message = caught.value.message
    assert "import_max_bytes" in message and "line 5" in message, message
    assert caught.value.details["errors"][0]["limit"] == 1 << 20
    assert ds.list_datasets(ctx).total == 0


def test_a_failed_sqlite_import_gives_its_write_ahead_log_back(tmp_path: Path) -> None:
    """SQLite only: the write-ahead log is SQLite's (PostgreSQL's autovacuum reclaims rows)."""
    database = tmp_path / "benchbook.db"
    engine = make_engine(f"sqlite:///{database}")
    migrate(engine)
    ctx = local_admin_context(engine, Settings(home=tmp_path / "home"))
    path = tmp_path / "rows.jsonl"
    # 96 MB of rows, past the import's 64 MiB page cache (so pages spill into the log), then a
    # blank task: the import fails at its last row
    path.write_bytes(_rows(4800, size=20_000, noise=True) + b'{"q": ""}\n')
    with pytest.raises(InvalidInput, match="row 4801"):
        _import(ctx, path)
    wal = database.with_name(database.name + "-wal")
    assert not wal.exists() or wal.stat().st_size < 4 << 20, wal.stat().st_size
    engine.dispose()
