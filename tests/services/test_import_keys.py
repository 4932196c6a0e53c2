"""Identical re-imports decided from the import key without building rows (issue 32), on
SQLite and PostgreSQL: the same file under the same key builds nothing; a change to any part
of the key (the file, the recipe, the options, the source limits and import bounds, the
catalog hook, the row-shaping code, Benchbook's version, a library's version) builds the rows
again."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

import benchbook
from benchbook.contracts.imports import ImportResult
from benchbook.datasets import catalog, import_key
from benchbook.errors import Conflict
from benchbook.services import imports as svc
from benchbook.services.context import Context

ROWS = [
    {"question": f"What is {i} + {i}?", "answer": f"{i} + {i} = {2 * i}\n#### {2 * i}"}
    for i in range(30)
]


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One item per import that built its rows (``counted_rows`` called)."""
    calls: list[int] = []
    real = svc.counted_rows

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(svc, "counted_rows", counted)
    return calls


def _write(path: Path, rows: list[dict[str, Any]], sort_keys: bool = True) -> Path:
    option = orjson.OPT_SORT_KEYS if sort_keys else 0
    path.write_bytes(b"".join(orjson.dumps(r, option=option) + b"\n" for r in rows))
    return path


def _import(ctx: Context, path: Path, **fields: Any) -> ImportResult:
    request = svc.parse_import_request({"benchmark": "gsm8k", "id": "sums", **fields})
    return svc.import_benchmark(ctx, request, path, row_worker=False)


def test_an_unchanged_file_is_identical_without_building_its_rows(
    ctx: Context, tmp_path: Path, builds: list[int]
) -> None:
    path = _write(tmp_path / "sums.jsonl", ROWS)
    first = _import(ctx, path)
    assert first.created and first.cases == 30 and len(builds) == 1
    again = _import(ctx, path)
    assert (again.version, again.created, again.cases) == ("1.0.0", False, 30)
    assert again.content_hash == first.content_hash and again.identical_to is None
    bumped = _import(ctx, path, bump="minor")
    assert (bumped.version, bumped.created, bumped.identical_to) == ("1.0.0", False, "1.0.0")
    explicit = _import(ctx, path, version="1.0.0")
    assert explicit.created is False
    assert len(builds) == 1  # three re-imports, no rows built


def _other_bytes(ctx: Context, path: Path, mp: pytest.MonkeyPatch) -> dict[str, Any]:
    _write(path, ROWS, sort_keys=False)  # the same rows, other bytes
    return {}


def _split(ctx: Context, path: Path, mp: pytest.MonkeyPatch) -> dict[str, Any]:
    return {"split": "train"}  # the recipe's source


def _limit(ctx: Context, path: Path, mp: pytest.MonkeyPatch) -> dict[str, Any]:
    return {"limit": 1000}


def _format(ctx: Context, path: Path, mp: pytest.MonkeyPatch) -> dict[str, Any]:
    return {"format": "jsonl"}


def _source_limits(ctx: Context, path: Path, mp: pytest.MonkeyPatch) -> dict[str, Any]:
    mp.setattr(ctx.settings, "max_record_bytes", ctx.settings.max_record_bytes - 1)
    return {}


def _import_bounds(ctx: Context, path: Path, mp: pytest.MonkeyPatch) -> dict[str, Any]:
    mp.setattr(ctx.settings, "import_max_rows", ctx.settings.import_max_rows - 1)
    return {}


def _hook(ctx: Context, path: Path, mp: pytest.MonkeyPatch) -> dict[str, Any]:
    def leave_as_is(case: dict[str, Any], row: dict[str, Any]) -> None:
        return None

    entry = catalog.get_entry("gsm8k")
    mp.setitem(catalog.CATALOG, "gsm8k", dataclasses.replace(entry, hook=leave_as_is))
    return {}


def _code(ctx: Context, path: Path, mp: pytest.MonkeyPatch) -> dict[str, Any]:
    mp.setattr(import_key, "code_digest", lambda: "0" * 64)  # an edited datasets/ module
    return {}


def _benchbook_version(ctx: Context, path: Path, mp: pytest.MonkeyPatch) -> dict[str, Any]:
    mp.setattr(benchbook, "__version__", "99.0.0")
    return {}


def _library(ctx: Context, path: Path, mp: pytest.MonkeyPatch) -> dict[str, Any]:
    versions = import_key.library_versions()
    mp.setattr(import_key, "library_versions", lambda: {**versions, "orjson": "0.0.1"})
    return {}


CHANGES: dict[str, Callable[[Context, Path, pytest.MonkeyPatch], dict[str, Any]]] = {
    "file bytes": _other_bytes,
    "recipe": _split,
    "option limit": _limit,
    "option format": _format,
    "source limits": _source_limits,
    "import bounds": _import_bounds,
    "catalog hook": _hook,
    "row-shaping code": _code,
    "benchbook version": _benchbook_version,
    "library version": _library,
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_each_part_of_the_import_key_makes_the_import_build_its_rows_again(
    ctx: Context, tmp_path: Path, builds: list[int], monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    path = _write(tmp_path / "sums.jsonl", ROWS)
    first = _import(ctx, path)
    _import(ctx, path)
    assert len(builds) == 1
    fields = CHANGES[change](ctx, path, monkeypatch)
    try:
        again = _import(ctx, path, **fields)
    except Conflict:  # the metadata says so (another file's sha256, another row count)
        pass
    else:
        assert again.created is False and again.content_hash == first.content_hash
        _import(ctx, path, **fields)  # the new key was recorded: no third build
    assert len(builds) == 2


def test_a_file_rewritten_while_it_was_read_records_no_key(
    ctx: Context, tmp_path: Path, builds: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path / "sums.jsonl", ROWS)
    real = svc.store_version

    def store_then_touch(*args: Any, **kwargs: Any) -> Any:
        result = real(*args, **kwargs)
        path.write_bytes(path.read_bytes())  # same bytes, a new modification time
        return result

    monkeypatch.setattr(svc, "store_version", store_then_touch)
    _import(ctx, path)
    monkeypatch.setattr(svc, "store_version", real)
    _import(ctx, path)
    assert len(builds) == 2  # the first key was not trusted, so the rows were built again
