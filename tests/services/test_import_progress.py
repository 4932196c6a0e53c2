"""Import progress as a share of the source (issue 14 item 3): a JSONL or CSV file's row count
is unknown until it is read, so its progress is bytes read of the file's size — compressed
bytes of a gzip file — rising to 1.0, on the job's record as well as the callback's."""

from __future__ import annotations

import csv
import gzip
import io
from pathlib import Path

import orjson
import pytest

from benchbook.contracts.imports import ImportProgress
from benchbook.services import imports, jobs, uploads
from benchbook.services.context import Context


def _rows(shared_data: Path, copies: int) -> list[dict[str, str]]:
    """The real GSM8K test rows, ``copies`` times (1,319 each)."""
    lines = (shared_data / "gsm8k" / "test.jsonl").read_bytes().splitlines()
    return [orjson.loads(line) for _ in range(copies) for line in lines]


def _jsonl(rows: list[dict[str, str]]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in rows)


def _csv(rows: list[dict[str, str]]) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, ["question", "answer"])
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode()


def _fractions(ctx: Context, path: Path) -> list[ImportProgress]:
    seen: list[ImportProgress] = []
    request = imports.parse_import_request({"benchmark": "gsm8k", "id": path.name.split(".")[0]})
    result = imports.import_benchmark(ctx, request, path, progress=seen.append)
    assert result.cases == 3 * 1319
    return seen


@pytest.mark.parametrize(
    ("name", "encode"),
    [
        ("rows.jsonl", _jsonl),
        ("table.csv", _csv),
        ("packed.jsonl.gz", lambda rows: gzip.compress(_jsonl(rows))),
    ],
)
def test_a_jsonl_or_csv_import_reports_the_share_of_bytes_read_rising_to_one(
    ctx: Context, shared_data: Path, tmp_path: Path, name: str, encode: object
) -> None:
    path = tmp_path / name
    path.write_bytes(encode(_rows(shared_data, 3)))  # type: ignore[operator]
    seen = _fractions(ctx, path)
    fractions = [p.fraction for p in seen]
    assert all(f is not None for f in fractions), fractions
    assert fractions == sorted(fractions)  # type: ignore[type-var]
    assert fractions[-1] == 1.0 and len(fractions) >= 4
    assert 0.0 < fractions[0] < 0.5 and all(p.total is None for p in seen)
    # Bytes track rows: after 1,000 of 3,957 rows about a quarter of the file has been read
    # (a gzip file's compressed position too, though its inflated text is read ahead).
    for p in seen[:-1]:
        assert abs(p.fraction - p.rows_read / 3957) < 0.02, (p.rows_read, p.fraction)  # type: ignore[operator]


def test_a_parquet_import_reports_rows_read_of_its_known_total(
    ctx: Context, shared_data: Path, tmp_path: Path
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "rows.parquet"
    pq.write_table(pa.Table.from_pylist(_rows(shared_data, 3)), path)
    seen = _fractions(ctx, path)
    assert [p.fraction for p in seen] == [p.rows_read / 3957 for p in seen[:-1]] + [1.0]
    assert len(seen) >= 4 and {p.total for p in seen} == {3957}


def test_an_uploaded_jsonl_jobs_record_carries_the_fraction(
    ctx: Context, shared_data: Path
) -> None:
    body = _jsonl(_rows(shared_data, 3))
    saved = uploads.save_upload(ctx, io.BytesIO(body), "rows.jsonl")
    request = imports.parse_import_request({"benchmark": "gsm8k"})
    job = uploads.start_import_from_upload(ctx, request, saved.id)
    done = jobs.wait_for_import(ctx, job.id, 120)
    assert done.state == "succeeded", done.error
    assert (done.progress.rows_read, done.progress.total) == (3957, None)
    assert done.progress.fraction == 1.0
    assert jobs.list_imports(ctx, 1)[0].progress.fraction == 1.0
