"""Flat rows to JSONL, CSV or Parquet, a batch at a time (bounded memory whatever the row count):
what ``benchbook runs export``, its HTTP route and the client write. A pure module under every
layer: it knows columns and values, not runs.

CSV output is escaped against spreadsheet formula injection (OWASP "CSV injection"): a text
cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading ``'``
so a spreadsheet shows it as text rather than running it. JSONL and Parquet keep values as is.

A column is ``(name, kind)`` with kind ``str``, ``int``, ``float`` or ``bool``; a row is a
mapping from column names to values (a missing name or None is empty: ``null`` in JSONL, an
empty field in CSV, a null in Parquet).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import orjson

RowFormat = Literal["jsonl", "csv", "parquet"]
ROW_FORMATS: tuple[RowFormat, ...] = ("jsonl", "csv", "parquet")
Column = tuple[str, Literal["str", "int", "float", "bool"]]
Row = Mapping[str, Any]


def jsonl_bytes(columns: Sequence[Column], batch: Iterable[Row]) -> bytes:
    """One JSON object per row (keys in column order) with ``\\n`` after each."""
    names = [name for name, _ in columns]
    return b"".join(orjson.dumps({n: row.get(n) for n in names}) + b"\n" for row in batch)


def csv_header(columns: Sequence[Column]) -> bytes:
    """The CSV header line (RFC 4180 quoting, ``\\r\\n`` line ends as the csv module writes)."""
    out = io.StringIO()
    csv.writer(out).writerow([name for name, _ in columns])
    return out.getvalue().encode()


def csv_bytes(columns: Sequence[Column], batch: Iterable[Row]) -> bytes:
    """The batch's CSV lines: booleans as ``true``/``false``, None as an empty field."""
    out = io.StringIO()
    writer = csv.writer(out)
    names = [name for name, _ in columns]
    for row in batch:
        writer.writerow([_csv_value(row.get(n)) for n in names])
    return out.getvalue().encode()


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""A CSV text cell starting with one of these is prefixed with ``'`` (formula injection)."""


def _csv_value(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def text_chunks(
    columns: Sequence[Column], batches: Iterable[Sequence[Row]], format: RowFormat
) -> Iterator[bytes]:
    """``jsonl`` or ``csv`` bytes, one chunk per batch (the CSV header first).

    Raises:
        ValueError: ``parquet`` (not a text stream: use :func:`write_rows`).
    """
    if format == "parquet":
        raise ValueError("parquet is written to a file, not streamed as text")
    if format == "csv":
        yield csv_header(columns)
    encode = csv_bytes if format == "csv" else jsonl_bytes
    for batch in batches:
        yield encode(columns, batch)


def _arrow_schema(columns: Sequence[Column]) -> Any:
    import pyarrow as pa

    kinds = {"str": pa.string(), "int": pa.int64(), "float": pa.float64(), "bool": pa.bool_()}
    return pa.schema([(name, kinds[kind]) for name, kind in columns])


def write_rows(
    columns: Sequence[Column], batches: Iterable[Sequence[Row]], format: RowFormat, out: Path
) -> int:
    """Write every batch to ``out`` in ``format`` (Parquet: one row group per batch) and return
    the number of rows written. Memory holds one batch at a time.

    Raises:
        OSError: ``out`` cannot be written.
    """
    written = 0
    if format != "parquet":
        with out.open("wb") as f:
            if format == "csv":
                f.write(csv_header(columns))
            encode = csv_bytes if format == "csv" else jsonl_bytes
            for batch in batches:
                f.write(encode(columns, batch))
                written += len(batch)
        return written
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = _arrow_schema(columns)
    names = [name for name, _ in columns]
    with pq.ParquetWriter(str(out), schema) as writer:
        for batch in batches:
            arrays = {n: [row.get(n) for row in batch] for n in names}
            writer.write_table(pa.Table.from_pydict(arrays, schema=schema))
            written += len(batch)
    return written
