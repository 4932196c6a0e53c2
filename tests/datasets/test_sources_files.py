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
from benchbook.errors import InvalidInput, NotFound


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


def test_a_missing_file_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotFound, match=r"/nope\.csv: file not found$"):
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


@pytest.mark.parametrize(
    "data",
    [b"", b"PAR1xxxxPAR1", bytes(range(256)) * 3],
    ids=["empty", "magic-only", "random-bytes"],
)
def test_a_corrupt_or_empty_parquet_file_is_invalid_input_naming_it(
    tmp_path: Path, data: bytes
) -> None:
    path = _write(tmp_path / "x.parquet", data)
    with pytest.raises(InvalidInput, match=r"^x\.parquet: not a readable Parquet file: "):
        _rows(path)
    packed = _write(tmp_path / "x.parquet.gz", gzip.compress(data))
    with pytest.raises(InvalidInput, match=r"^x\.parquet\.gz: not a readable Parquet file: "):
        _rows(packed)


def test_an_empty_parquet_file_says_it_is_empty(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match=r"the file is empty \(0 bytes\)"):
        FileSource(_write(tmp_path / "x.parquet", b""))


def test_a_parquet_file_with_a_corrupt_page_is_invalid_input(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"q": [f"question {i}" * 20 for i in range(3000)]}), path)
    start = pq.ParquetFile(path).metadata.row_group(0).column(0).data_page_offset
    data = bytearray(path.read_bytes())
    data[start + 20 : start + 400] = b"\xab" * 380
    path.write_bytes(bytes(data))
    source = FileSource(path)  # the footer is intact: the damage shows while reading
    with pytest.raises(InvalidInput, match=r"^t\.parquet: not a readable Parquet file: "):
        list(source.rows())


def test_a_truncated_gzip_stream_is_named(tmp_path: Path) -> None:
    packed = gzip.compress(b'{"a": 1}\n' * 200)
    path = _write(tmp_path / "t.jsonl.gz", packed[: len(packed) // 2])
    with pytest.raises(InvalidInput, match=r"^t\.jsonl\.gz: the gzip stream is truncated"):
        _rows(path)


def test_a_corrupt_gzip_stream_is_named(tmp_path: Path) -> None:
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03"
    path = _write(tmp_path / "t.csv.gz", header + b"garbage that is not deflate data")
    with pytest.raises(InvalidInput, match=r"^t\.csv\.gz: the gzip stream is corrupt: "):
        _rows(path)


def test_a_bad_gzip_header_is_named(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.jsonl.gz", b"\x1f\x8b\x07\x00" + b"x" * 20)
    with pytest.raises(InvalidInput, match=r"^t\.jsonl\.gz: not a valid gzip stream"):
        _rows(path)


def test_a_non_utf8_csv_names_the_line_column_and_byte_offset(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.csv", b"question,answer\nq1,1\ncaf\xe9,2\n")
    with pytest.raises(InvalidInput) as info:
        _rows(path)
    assert info.value.message == (
        "t.csv line 3: not UTF-8 text: byte 0xe9 at column 4 (byte offset 24); "
        "the file must be UTF-8 encoded (re-save it as UTF-8)"
    )
    assert info.value.details["errors"][0]["row"] == 3


def test_a_non_utf8_csv_deep_in_a_large_file_names_its_line(tmp_path: Path) -> None:
    body = b"a,b\n" + b"x,1\n" * 100_000 + b"\xff,2\n"
    with pytest.raises(InvalidInput, match=r"^t\.csv line 100002: .*byte offset 400004"):
        _rows(_write(tmp_path / "t.csv", body))
    with pytest.raises(InvalidInput, match=r"^t\.csv\.gz line 100002: .*byte offset 400004"):
        _rows(_write(tmp_path / "t.csv.gz", gzip.compress(body)))


def test_a_non_utf8_jsonl_line_names_the_line_and_byte_offset(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.jsonl", b'{"a": "x"}\n{"a": "caf\xe9"}\n')
    with pytest.raises(InvalidInput) as info:
        _rows(path)
    message = info.value.message
    assert message.startswith("t.jsonl line 2: not UTF-8 text: byte 0xe9 at column 11")
    assert "byte offset 21" in message and "UTF-8 encoded" in message
    assert "surrogates" not in message


def test_a_non_utf8_json_document_names_the_line_and_byte_offset(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.json", b'[\n{"a": "x"},\n{"a": "\xff"}\n]')
    with pytest.raises(InvalidInput, match=r"^t\.json line 3: not UTF-8 text: byte 0xff"):
        _rows(path)


def test_a_bad_jsonl_line_gives_one_line_number_and_the_column(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.jsonl", b'{"a": 1}\n{x}\n')
    with pytest.raises(InvalidInput) as info:
        _rows(path)
    assert info.value.message == (
        "t.jsonl line 2, column 2: not valid JSON: unexpected character, expected a string key"
    )


def test_a_bad_json_document_names_its_line_and_column(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.json", b'[\n  {"a": 1},\n  {"a": }\n]')
    with pytest.raises(InvalidInput, match=r"^t\.json line 3, column 9: not valid JSON: "):
        _rows(path)


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("e.jsonl", b""),
        ("e.csv", b""),
        ("e.json", b""),
        ("blank.jsonl", b"\n  \r\n\n"),
        ("blank.json", b" \n"),
        ("header.csv", b"question,answer\n"),
        ("array.json", b"[]"),
    ],
)
def test_empty_files_of_every_format_yield_no_rows_alike(
    tmp_path: Path, name: str, data: bytes
) -> None:
    assert _rows(_write(tmp_path / name, data)) == []


def test_a_tsv_file_is_read_with_tabs(tmp_path: Path) -> None:
    data = b"question\tanswer\nWhat, if anything?\t42\n"
    assert _rows(_write(tmp_path / "t.tsv", data)) == [
        (2, {"question": "What, if anything?", "answer": "42"})
    ]
    packed = _write(tmp_path / "t.tsv.gz", gzip.compress(data))
    assert [r for _, r in _rows(packed)] == [{"question": "What, if anything?", "answer": "42"}]


def test_a_path_that_is_not_a_regular_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match=r"^/dev/null: not a regular file"):
        FileSource(Path("/dev/null"))
    with pytest.raises(InvalidInput, match="is a folder, not a file"):
        FileSource(tmp_path)


def test_a_folder_task_file_that_is_empty_bad_json_or_not_utf8_is_named(tmp_path: Path) -> None:
    _task(tmp_path, "a/ok.json", b'{"id": "1"}')
    _task(tmp_path, "b/empty.json", b"")
    with pytest.raises(InvalidInput, match=r"^b/empty\.json: the file is empty"):
        FolderSource(tmp_path)
    _task(tmp_path, "b/empty.json", b'{\n  "id": \n}')
    with pytest.raises(InvalidInput, match=r"^b/empty\.json line 3, column 1: not valid JSON"):
        FolderSource(tmp_path)
    _task(tmp_path, "b/empty.json", b'{"id": "caf\xe9"}')
    with pytest.raises(InvalidInput, match=r"^b/empty\.json line 1: not UTF-8 text: byte 0xe9"):
        FolderSource(tmp_path)
