"""Imports that build their rows in a second process (``row_worker=True``, what a CLI import of
a large local file does, issue 15 item 2) store what the one-process path stores: the same
content hash and bodies; bad rows, duplicate ids and a cancel still name their lines or roll
back, leaving nothing stored. SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from sqlalchemy import func, select

from benchbook.contracts.imports import ImportProgress
from benchbook.errors import Cancelled, InvalidInput
from benchbook.services import datasets as ds
from benchbook.services import imports as svc
from benchbook.services.context import Context
from benchbook.store.tables import case_bodies

PAD = "x" * 420
ROWS = 4500


def _file(tmp_path: Path, name: str = "rows.jsonl", **changed: dict[str, Any]) -> Path:
    rows = [{"id": f"c{i}", "q": f"question {i} {PAD}"} for i in range(ROWS)]
    for index, row in changed.items():
        rows[int(index.removeprefix("line")) - 1] = row
    path = tmp_path / name
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def _import(
    ctx: Context, path: Path, progress: Any = None, shared: bool = False, worker: bool = True
) -> Any:
    spec = {
        "id": "rows",
        "source": {"kind": "file"},
        "mapping": {"task_field": "q", "id_field": "id"},
    }
    request = svc.parse_import_request({"spec": spec, "shared": shared})
    return svc.import_benchmark(ctx, request, path, progress=progress, row_worker=worker)


def _nothing_stored(ctx: Context) -> bool:
    with ctx.engine.connect() as conn:
        bodies = conn.execute(select(func.count()).select_from(case_bodies)).scalar_one()
    return ds.list_datasets(ctx).total == 0 and bodies == 0


def test_the_worker_stores_what_the_one_process_path_stores(
    no_child_left: Callable[[], bool], ctx: Context, tmp_path: Path
) -> None:
    path = _file(tmp_path)
    seen: list[ImportProgress] = []
    built = _import(ctx, path, progress=seen.append)
    here = _import(ctx, path, shared=True, worker=False)  # the same id and version, in _shared
    assert built.cases == here.cases == ROWS and built.content_hash == here.content_hash
    with ctx.engine.connect() as conn:  # every body was found stored: none twice
        assert conn.execute(select(func.count()).select_from(case_bodies)).scalar_one() == ROWS
    read = [p.rows_read for p in seen]  # every 1000 rows (and at 100s after 0.25 s), the end
    assert set(range(1000, ROWS, 1000)) <= set(read) and read == sorted(read) and read[-1] == ROWS
    assert all(n % 100 == 0 for n in read)
    assert [p.fraction for p in seen][-1] == 1.0 and 0 < seen[0].fraction < 0.25  # type: ignore[operator]
    assert no_child_left()


def test_a_bad_row_deep_in_a_large_file_names_its_line_and_stores_nothing(
    no_child_left: Callable[[], bool], ctx: Context, tmp_path: Path
) -> None:
    path = _file(tmp_path, line4321={"id": "c4320", "q": "  "})
    with pytest.raises(InvalidInput) as err:
        _import(ctx, path)
    assert err.value.message.startswith("row 4321: task is empty")
    assert _nothing_stored(ctx) and no_child_left()


def test_duplicate_ids_in_a_large_file_name_their_lines(
    no_child_left: Callable[[], bool], ctx: Context, tmp_path: Path
) -> None:
    path = _file(tmp_path, line4400={"id": "c7", "q": "again"})
    with pytest.raises(InvalidInput) as err:
        _import(ctx, path)
    assert "'c7' on lines 8 and 4400" in err.value.message
    assert _nothing_stored(ctx) and no_child_left()


def test_a_cancel_mid_import_rolls_back_and_stops_the_worker(
    no_child_left: Callable[[], bool], ctx: Context, tmp_path: Path
) -> None:
    path = _file(tmp_path)

    def cancel_at_3000(p: ImportProgress) -> None:
        if p.rows_read >= 3000:
            raise Cancelled("import cancelled; nothing was stored")

    with pytest.raises(Cancelled):
        _import(ctx, path, progress=cancel_at_3000)
    assert _nothing_stored(ctx) and no_child_left()
    assert _import(ctx, path).cases == ROWS  # and the next import is unaffected
