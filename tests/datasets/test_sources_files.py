"""File row sources (SPEC E.2): CSV, JSONL, JSON, Parquet, gzip and task folders."""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchbook.datasets.sources.files import FileSource
from benchbook.datasets.sources.folder import FolderSource
from benchbook.errors import InvalidInput


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _rows(path: Path, **kwargs: object) -> list[tuple[int, dict[str, object]]]:
    return list(FileSource(path, **kwargs).rows())  # type: ignore[arg-type]


def test_csv_keeps_quoted_newlines_doubled_quotes_and_exact_headers(tmp_path: Path) -> None:
    data = '\ufeff Name ,note\r\nA,"line one\nline two"\r\nB,"say ""hi"""\r\n'.encode()
    rows = _rows(_write(tmp_path / "t.csv", data))
    assert rows == [
        (2, {" Name ": "A", "note": "line one\nline two"}),
        (4, {" Name ": "B", "note": 'say "hi"'}),
    ]


def test_a_ragged_csv_row_names_its_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.csv", b'a,b\n1,2\n"x\ny",3\n4,5,6\n')
    with pytest.raises(InvalidInput) as info:
        _rows(path)
    assert "line 5" in info.value.message
    assert "3 cells" in info.value.message
    assert info.value.details["errors"][0]["row"] == 5


def test_a_trailing_comma_column_is_kept_empty(tmp_path: Path) -> None:
    rows = _rows(_write(tmp_path / "t.csv", b"a,b,total\n1,2,\n"))
    assert rows == [(2, {"a": "1", "b": "2", "total": ""})]


def test_jsonl_skips_blank_lines_and_accepts_no_final_newline(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.jsonl", b'{"a": 1}\n\n  \r\n{"a": 2}')
    assert _rows(path) == [(1, {"a": 1}), (4, {"a": 2})]


def test_a_bad_jsonl_line_names_its_number(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.jsonl", b'{"a": 1}\n{"a": \n')
    with pytest.raises(InvalidInput) as info:
        _rows(path)
    assert "t.jsonl line 2" in info.value.message


def test_a_jsonl_line_that_is_not_an_object_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="line 1: expected a JSON object"):
        _rows(_write(tmp_path / "t.jsonl", b"[1, 2]\n"))


def test_a_json_array_yields_its_objects(tmp_path: Path) -> None:
    rows = _rows(_write(tmp_path / "t.json", b'[{"id": 1}, {"id": "2"}]'))
    assert rows == [(1, {"id": 1}), (2, {"id": "2"})]


def test_an_object_wrapping_one_list_is_unwrapped(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.json", b'{"version": "1.0", "queries": [{"uid": "T1"}]}')
    assert _rows(path) == [(1, {"uid": "T1"})]


def test_an_object_wrapping_several_lists_needs_json_key(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.json", b'{"a": [{"x": 1}], "b": [{"y": 2}]}')
    with pytest.raises(InvalidInput) as info:
        _rows(path)
    assert "'a', 'b'" in info.value.message and "json_key" in info.value.message
    assert _rows(path, json_key="b") == [(1, {"y": 2})]


def test_parquet_values_keep_their_types(tmp_path: Path) -> None:
    table = pa.table(
        {
            "id": [1, 2],
            "score": [0.5, None],
            "tags": [["a"], []],
            "when": [dt.date(2024, 1, 2), dt.date(2024, 1, 3)],
        }
    )
    path = tmp_path / "t.parquet"
    pq.write_table(table, path)
    source = FileSource(path)
    assert source.total == 2
    assert list(source.rows()) == [
        (1, {"id": 1, "score": 0.5, "tags": ["a"], "when": "2024-01-02"}),
        (2, {"id": 2, "score": None, "tags": [], "when": "2024-01-03"}),
    ]


def test_gzip_is_detected_by_magic_bytes_and_hashed_as_stored(tmp_path: Path) -> None:
    packed = gzip.compress(b'{"a": 1}\n{"a": 2}\n')
    path = _write(tmp_path / "rows.jsonl.bin", packed)
    source = FileSource(path, format="jsonl")
    assert [r for _, r in source.rows()] == [{"a": 1}, {"a": 2}]
    assert source.ref.sha256 == hashlib.sha256(packed).hexdigest()
    assert source.ref.kind == "file" and source.ref.file == "rows.jsonl.bin"


def test_a_gz_csv_is_read_by_extension(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.csv.gz", gzip.compress(b"a\n1\n"))
    assert _rows(path) == [(2, {"a": "1"})]


def test_a_missing_file_is_invalid_input(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="file not found"):
        FileSource(tmp_path / "nope.csv")


def test_real_gsm8k_jsonl_streams_all_rows(shared_data: Path) -> None:
    path = shared_data / "gsm8k" / "test.jsonl"
    source = FileSource(path)
    rows = sum(1 for _ in source.rows())
    assert rows == 1319
    assert source.ref.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_real_trek_csv_keeps_every_column(shared_data: Path) -> None:
    rows = [r for _, r in FileSource(shared_data / "trek" / "trek_queries.first50.csv").rows()]
    assert len(rows) == 50
    assert list(rows[0])[-3:] == ["balance", "impossible", "total_score"]
    assert all(len(r) == 13 for r in rows)
    assert rows[0]["impossible"] == "0.0" and rows[0]["total_score"] == ""


def _task(folder: Path, rel: str, body: bytes) -> None:
    path = folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body)


def test_a_folder_disambiguates_ids_shared_by_two_domains_only(tmp_path: Path) -> None:
    _task(tmp_path, "web/a.json", b'{\r\n  "id": "dup",\r\n  "instruction": "w"\r\n}')
    _task(tmp_path, "mail/b.json", b'{"id": "dup", "instruction": "m"}\r\n')
    _task(tmp_path, "mail/c.json", b'{"id": "solo", "instruction": "s"}')
    source = FolderSource(tmp_path)
    rows = [r for _, r in source.rows()]
    assert [r["id"] for r in rows] == ["mail/dup", "solo", "web/dup"]
    assert [r["_file"] for r in rows] == ["mail/b.json", "mail/c.json", "web/a.json"]
    assert source.total == 3 and source.ref.sha256


def test_an_empty_folder_is_invalid_input(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match=r"no \.json task files"):
        FolderSource(tmp_path)


def test_real_osworld_examples_keep_all_369_tasks(shared_data: Path) -> None:
    source = FolderSource(shared_data / "osworld" / "examples")
    ids = [r["id"] for _, r in source.rows()]
    assert len(ids) == 369 and len(set(ids)) == 369
    prefixed = [i for i in ids if "/" in i]
    assert len(prefixed) == 22
    assert {i.split("/")[0] for i in prefixed} == {"chrome", "thunderbird"}
