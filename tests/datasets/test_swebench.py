"""The SWE-bench loader and its catalog entries (SPEC I, issue 12 item 2) on the real rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from benchbook.datasets.catalog import get_entry
from benchbook.datasets.gold import patch_lines
from benchbook.datasets.mapping import CaseBuilder, RowError, case_rows
from benchbook.datasets.swebench import SweBenchSource, decode_test_list, swebench_image
from benchbook.errors import InvalidInput

GOLD = ["patch", "test_patch", "FAIL_TO_PASS", "PASS_TO_PASS", "hints_text"]
EXTRAS = ["patch_files", "test_patch_files", "patch_diff_details"]


def _cases(path: Path, entry_id: str = "swe-bench-lite") -> tuple[list[dict[str, Any]], Any]:
    entry = get_entry(entry_id)
    assert entry.file_source is not None
    source = entry.file_source(path, None)
    builder = CaseBuilder(entry.recipe.mapping, entry_id, entry.recipe.grader_templates, entry.hook)
    return [orjson.loads(body) for _, body, _ in case_rows(source.rows(), builder)], source


def _rows(shared_data: Path, name: str = "swe-bench-lite-test.json") -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads((shared_data / "swebench" / name).read_text())
    return rows


def test_all_300_test_rows_become_checkout_cases_with_only_the_problem_statement_as_task(
    shared_data: Path,
) -> None:
    rows = _rows(shared_data)
    cases, source = _cases(shared_data / "swebench" / "swe-bench-lite-test.json")
    assert len(cases) == 300 == len({c["id"] for c in cases})
    for row, case in zip(rows, cases, strict=True):
        assert case["id"] == row["instance_id"] and case["task"] == row["problem_statement"]
        assert case["env"] == {
            "kind": "repo",
            "source": {"git": f"https://github.com/{row['repo']}.git", "ref": row["base_commit"]},
            "setup": [],
        }
        assert case["image"] is None  # runs without an image provider
        assert case["metadata"]["swebench_image"] == swebench_image(row["instance_id"])
        assert case["gold_fields"] == GOLD + EXTRAS
        assert case["metadata"]["FAIL_TO_PASS"] == json.loads(row["FAIL_TO_PASS"])
        assert case["metadata"]["PASS_TO_PASS"] == json.loads(row["PASS_TO_PASS"])
        assert case["metadata"]["hints_text"] == row["hints_text"]
        assert case["metadata"]["patch_files"] == row["patch_files"]
        assert case["metadata"]["version"] == row["version"]  # text, never a float
    visible = set(cases[0]["metadata"]) - set(cases[0]["gold_fields"])
    assert visible == {
        "repo",
        "base_commit",
        "version",
        "created_at",
        "environment_setup_commit",
        "swebench_image",
    }
    assert source.notes[0].startswith("swe-bench: 300 rows from 12 repositories")
    assert source.notes[2] == f"extra columns kept as gold: {', '.join(EXTRAS)}"


def test_the_jsonl_and_parquet_copies_of_the_same_rows_give_the_same_cases(
    shared_data: Path, tmp_path: Path
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    # patch_diff_details has a different struct per row; Parquet would pad it with nulls
    rows = [{k: v for k, v in r.items() if k != "patch_diff_details"} for r in _rows(shared_data)]
    jsonl = tmp_path / "lite.jsonl"
    jsonl.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    parquet = tmp_path / "lite.parquet"
    pq.write_table(pa.Table.from_pylist(rows), parquet)
    from_jsonl, _ = _cases(jsonl)
    from_parquet, _ = _cases(parquet)
    assert len(from_jsonl) == 300
    assert from_parquet == from_jsonl
    assert from_jsonl[0]["gold_fields"] == [*GOLD, "patch_files", "test_patch_files"]


def test_all_23_dev_rows_import_including_sqlfluff_1733(shared_data: Path) -> None:
    cases, _ = _cases(shared_data / "swebench" / "swe-bench-lite-dev.json")
    assert len(cases) == 23
    (sqlfluff,) = [c for c in cases if c["id"] == "sqlfluff__sqlfluff-1733"]
    # the imported gold test patch still reads as a pure rename plus a new file
    got = {f.path: f for f in patch_lines(sqlfluff["metadata"]["test_patch"])}
    rename = got["test/rules/std_L016_L36_combo_test.py"]
    assert (rename.status, rename.old_path) == ("renamed", "test/rules/std_L016_L36_combo.py")
    assert got["test/rules/std_L003_L036_L039_combo_test.py"].status == "added"
    assert sqlfluff["env"]["source"]["ref"] == sqlfluff["metadata"]["base_commit"]


def test_real_lists_of_tests_are_kept_as_they_are() -> None:
    assert decode_test_list(["a::b", "c"], "f") == ["a::b", "c"]
    assert decode_test_list('["a::b"]', "f") == ["a::b"]


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ('["test_a", ', "not JSON text of a list of test names"),
        ('{"a": 1}', "expected a list of test names, got dict"),
        ('["ok", 3]', "expected a list of test names, got a list holding int"),
    ],
)
def test_a_bad_test_list_names_the_row_instance_and_field_and_imports_nothing(
    shared_data: Path, tmp_path: Path, value: str, says: str
) -> None:
    rows = _rows(shared_data, "swe-bench-lite-dev.json")
    rows[4]["PASS_TO_PASS"] = value
    path = tmp_path / "dev.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    with pytest.raises(InvalidInput) as info:
        _cases(path)
    message = info.value.message
    assert message.startswith("row 5: instance ") and rows[4]["instance_id"] in message
    assert "field 'PASS_TO_PASS'" in message and says in message
    assert "nothing was imported" in message


def test_decode_test_list_raises_a_row_error() -> None:
    with pytest.raises(RowError, match="instance 'x' field 'FAIL_TO_PASS'"):
        decode_test_list("not json", "instance 'x' field 'FAIL_TO_PASS'")


def test_a_file_without_extra_columns_reports_none(shared_data: Path, tmp_path: Path) -> None:
    rows = [
        {k: v for k, v in r.items() if k not in EXTRAS}
        for r in _rows(shared_data, "swe-bench-lite-dev.json")
    ]
    path = tmp_path / "plain.json"
    path.write_text(json.dumps(rows))
    cases, source = _cases(path)
    assert cases[0]["gold_fields"] == GOLD
    assert isinstance(source, SweBenchSource)
    assert source.notes[2] == "extra columns kept as gold: none"
