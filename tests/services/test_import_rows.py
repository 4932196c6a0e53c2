"""Import rows name their file lines and are refused when they are not cases (issue 8 items 3-5):
duplicate JSON keys, duplicate case ids by physical line, blank tasks. SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchbook.errors import InvalidInput
from benchbook.services import datasets as ds
from benchbook.services import imports as svc
from benchbook.services.context import Context


def _import(ctx: Context, text: str, fmt: str, **mapping: Any) -> Any:
    spec = {"id": "rows", "source": {"kind": "file"}, "mapping": {"task_field": "q", **mapping}}
    request = svc.parse_import_request({"spec": spec, "text": text, "format": fmt})
    return svc.import_benchmark(ctx, request)


def _nothing_stored(ctx: Context) -> bool:
    return ds.list_datasets(ctx).total == 0


@pytest.mark.parametrize(
    ("fmt", "text", "line"),
    [
        ("jsonl", '{"q": "a"}\n\n{"q": "b", "n": 1, "n": 2}\n', 3),
        ("json", '[{"q": "a"},\n {"q": "b",\n  "m": {"n": 1, "n": 2}}]', 3),
    ],
)
def test_a_duplicate_key_in_a_json_record_is_an_error_naming_line_and_key(
    ctx: Context, fmt: str, text: str, line: int
) -> None:
    with pytest.raises(InvalidInput) as err:
        _import(ctx, text, fmt)
    assert f"line {line}" in err.value.message and "duplicate key 'n'" in err.value.message
    assert _nothing_stored(ctx)


def test_a_duplicate_case_id_in_a_csv_names_the_physical_lines(ctx: Context) -> None:
    text = 'id,q\nx,"first"\ny,"multi\nline"\nx,again\n'
    with pytest.raises(InvalidInput) as err:
        _import(ctx, text, "csv", id_field="id")
    assert "'x' on lines 2 and 5" in err.value.message
    assert err.value.details["errors"][0]["lines"] == [2, 5]
    assert _nothing_stored(ctx)


def test_a_duplicate_case_id_in_jsonl_with_blank_lines_names_the_physical_lines(
    ctx: Context,
) -> None:
    text = '\n{"id": "x", "q": "a"}\n\n\n{"id": "y", "q": "b"}\n{"id": "x", "q": "c"}\n'
    with pytest.raises(InvalidInput) as err:
        _import(ctx, text, "jsonl", id_field="id")
    assert "'x' on lines 2 and 6" in err.value.message
    assert _nothing_stored(ctx)


def test_a_blank_task_is_not_a_case(ctx: Context) -> None:
    text = '{"q": "fine"}\n{"q": "  "}\n{"q": ""}\n{"q": "\\t\\n"}\n'
    with pytest.raises(InvalidInput) as err:
        _import(ctx, text, "jsonl")
    assert [e["row"] for e in err.value.details["errors"]] == [2, 3, 4]
    assert "task is empty" in err.value.message
    assert _nothing_stored(ctx)


def test_a_task_template_that_renders_blank_is_not_a_case(ctx: Context) -> None:
    with pytest.raises(InvalidInput) as err:
        _import(ctx, '{"q": "a", "x": " "}\n', "jsonl", task_template=" {x?} {missing?}")
    assert "task is empty" in err.value.message
    assert _nothing_stored(ctx)


def test_blank_tasks_from_a_file_on_disk_are_refused_too(ctx: Context, tmp_path: Path) -> None:
    path = tmp_path / "rows.csv"
    path.write_text("q\nfine\n   \n")
    spec = {"id": "rows", "source": {"kind": "file"}, "mapping": {"task_field": "q"}}
    with pytest.raises(InvalidInput) as err:
        svc.import_benchmark(ctx, svc.parse_import_request({"spec": spec}), path)
    assert err.value.details["errors"][0]["row"] == 3
