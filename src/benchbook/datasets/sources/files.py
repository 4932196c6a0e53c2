"""File row sources: CSV, JSONL, JSON, Parquet, each optionally gzip-compressed (SPEC E.2).

Every source streams (JSON documents excepted: a JSON array is parsed whole, which is why large
sources should be JSONL, CSV or Parquet) and yields ``(row_number, row)`` as described in
``sources/base.py``. ``ref.sha256`` is the SHA-256 of the file's bytes as stored (compressed bytes
for ``.gz``); it is computed when the source is opened, because a version's lineage is written
before its cases (one sequential read, ~1 GB/s).

Formats:

- CSV: RFC 4180 via :mod:`csv` (quoted newlines, doubled quotes), UTF-8 with the BOM stripped,
  header names kept exactly, empty lines skipped, every cell a string; comma-separated, or
  tab-separated when the name ends ``.tsv`` (``.tsv.gz``). A row whose cell count differs from
  the header's is an InvalidInput naming its line.
- JSONL: one JSON object per line; blank lines skipped; a missing final newline is fine; a line
  that is not a JSON object is an InvalidInput naming the line (and column).
- JSON: an array of objects, or an object wrapping exactly one list (``json_key`` picks one when
  there are several). An empty (or whitespace-only) document has no rows, like an empty JSONL.
- Parquet: read in record batches with pyarrow; values keep their types (dates and timestamps
  become ISO 8601 text, decimals text, binary base64 unless it is UTF-8).

While JSONL or CSV rows are read, :meth:`FileSource.read_fraction` is the share of the file's
bytes consumed (compressed bytes for gzip), so an import can show a percentage without counting
rows first.

Unreadable bytes are InvalidInput naming the file (``sources/read_errors.py``): text that is not
UTF-8 (line, column, byte offset), broken or truncated gzip, a file pyarrow cannot read as
Parquet, a path that is not a regular file. A file with no rows yields nothing; the import
service rejects an import that reads no rows.
"""

from __future__ import annotations

import base64
import csv
import datetime as dt
import decimal
import gzip
import hashlib
import io
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, cast

import orjson

from benchbook.contracts import SourceRef
from benchbook.contracts.recipe import FileFormat
from benchbook.datasets.sources import json_docs
from benchbook.datasets.sources.base import Row
from benchbook.datasets.sources.limits import CountedReader, SourceLimits, too_large
from benchbook.datasets.sources.read_errors import (
    READ_ERRORS,
    bad_input,
    check_regular_file,
    duplicate_key,
    json_error,
    not_utf8,
    parquet_error,
    read_error,
)
from benchbook.errors import InvalidInput, PayloadTooLarge

GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 20
_RECORD_SETTING = "BENCHBOOK_MAX_RECORD_BYTES"
_DOCUMENT_SETTING = "BENCHBOOK_MAX_DOCUMENT_BYTES"
# Lines are bounded before the csv module sees them (``_bounded_lines``), so fields may be long.
csv.field_size_limit(sys.maxsize)


def file_sha256(path: Path) -> str:
    """SHA-256 hex digest of a file's bytes, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def is_gzip(path: Path) -> bool:
    """True when the file starts with the gzip magic bytes."""
    with path.open("rb") as f:
        return f.read(2) == GZIP_MAGIC


def guess_format(name: str) -> FileFormat | None:
    """The format implied by a file name (``.gz`` ignored), or None."""
    low = name.lower().removesuffix(".gz")
    for ext, fmt in ((".jsonl", "jsonl"), (".ndjson", "jsonl"), (".json", "json")):
        if low.endswith(ext):
            return cast(FileFormat, fmt)
    if low.endswith((".csv", ".tsv")):
        return "csv"
    if low.endswith((".parquet", ".pq")):
        return "parquet"
    return None


def _sniff_format(path: Path, gz: bool) -> FileFormat:
    """Guess from content when the name says nothing: ``PAR1`` → parquet, ``[`` or a single
    multi-line object → json, ``{`` → jsonl, else csv."""
    opener = gzip.open if gz else open
    with opener(path, "rb") as f:
        head: bytes = f.read(4096)
    if head.startswith(b"PAR1"):
        return "parquet"
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"["):
        return "json"
    if text.startswith(b"{"):
        first = text.split(b"\n", 1)[0].strip()
        try:
            orjson.loads(first)
            return "jsonl"
        except orjson.JSONDecodeError:
            return "json"
    return "csv"


class FileSource:
    """Rows of one local file. See the module docstring for the formats.

    Args:
        path: the file.
        format: ``csv | jsonl | json | parquet``; guessed from the name, then the content.
        json_key: for a JSON object wrapping several lists, the key of the list to read.
        name: the file name recorded in lineage (defaults to ``path.name``; uploads pass theirs).
        limits: bounds on decompressed bytes, one line and a whole document (``limits.py``).

    Raises:
        NotFound: the path is missing.
        InvalidInput: the path is not a regular file, the file is unreadable (bad gzip, not
            Parquet), or (while iterating) malformed, naming the line or element.
        PayloadTooLarge: (while iterating) a line, a whole document or the decompressed content
            is over its bound in ``limits``.
    """

    def __init__(
        self,
        path: Path,
        format: FileFormat | None = None,
        json_key: str | None = None,
        name: str | None = None,
        limits: SourceLimits | None = None,
    ) -> None:
        check_regular_file(path, str(name or path))
        self.limits = limits or SourceLimits()
        self.path = path
        self.name = name or path.name
        self.delimiter = "\t" if self.name.lower().removesuffix(".gz").endswith(".tsv") else ","
        self.json_key = json_key
        try:
            self.gz = is_gzip(path)
            self.format: FileFormat = (
                format or guess_format(self.name) or _sniff_format(path, self.gz)
            )
            self.ref = SourceRef(kind="file", file=self.name, sha256=file_sha256(path))
        except READ_ERRORS as exc:
            raise read_error(self.name, exc) from exc
        self.total: int | None = self._count()
        self.size_bytes = path.stat().st_size
        # While reading: (stored file, decompressed reader, inflating counter); see read_fraction.
        self._meter: tuple[IO[bytes], IO[bytes] | None, CountedReader | None] | None = None
        self._finished = False

    def _count(self) -> int | None:
        if self.format == "parquet" and not self.gz:
            return int(self._parquet_file(self.path).metadata.num_rows)
        return None

    def _parquet_file(self, source: Any) -> Any:
        """``pq.ParquetFile(source)``; what pyarrow raises becomes InvalidInput naming the file."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            return pq.ParquetFile(source)
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise parquet_error(self.name, exc, self.path.stat().st_size) from exc

    def _open(self) -> IO[bytes]:
        if self.gz:
            # The caller's ``with`` closes it: BufferedReader → CountedReader → GzipFile.
            inflated = gzip.open(self.path, "rb")  # noqa: SIM115
            counted = CountedReader(
                cast(IO[bytes], inflated), self.limits.decompressed_bytes, self.name
            )
            buffered = io.BufferedReader(counted, _CHUNK)
            self._meter = (cast(IO[bytes], inflated.fileobj), buffered, counted)
            return buffered
        plain = self.path.open("rb", buffering=_CHUNK)
        self._meter = (plain, None, None)
        return plain

    def read_fraction(self) -> float | None:
        """The share of the file's stored bytes read so far, 0.0 to 1.0 (1.0 once every row
        was yielded), for JSONL and CSV; None for other formats or before reading starts.

        A gzip file counts compressed bytes against the compressed size; as its decompressed
        text is read ahead in 1 MiB buffers, the compressed position is scaled by the share of
        the inflated bytes actually consumed."""
        if self.format not in ("jsonl", "csv"):
            return None
        if self._finished:
            return 1.0
        if self._meter is None or self.size_bytes == 0:
            return None
        stored, opened, counted = self._meter
        try:
            share = stored.tell() / self.size_bytes
            if opened is not None and counted is not None and counted.seen:
                share *= opened.tell() / counted.seen
        except (ValueError, OSError):  # closed: the reader stopped
            return None
        return min(1.0, share)

    def _line_too_long(self, number: int) -> PayloadTooLarge:
        limit = self.limits.record_bytes
        return too_large(f"{self.name} line {number}", "the line", limit, _RECORD_SETTING)

    def _read_whole(self, f: IO[bytes]) -> bytes:
        limit = self.limits.document_bytes
        data = f.read(limit + 1)
        if len(data) > limit:
            raise too_large(self.name, "the document (read whole)", limit, _DOCUMENT_SETTING)
        return data

    def rows(self) -> Iterator[tuple[int, Row]]:
        """Yield ``(row_number, row)`` in file order (see ``sources/base.py``)."""
        readers = {
            "csv": self._csv_rows,
            "jsonl": self._jsonl_rows,
            "json": self._json_rows,
            "parquet": self._parquet_rows,
        }
        self._finished = False
        try:
            yield from readers[self.format]()
        except READ_ERRORS as exc:
            raise read_error(self.name, exc) from exc
        self._finished = True

    def _not_utf8(self) -> InvalidInput:
        """Re-read the file to name its first byte that is not UTF-8 (error path only)."""
        with self._open() as f:
            return not_utf8(self.name, f)

    def _jsonl_rows(self) -> Iterator[tuple[int, Row]]:
        loads = json_docs.loads
        limit = self.limits.record_bytes
        with self._open() as f:
            number = 0
            while line := f.readline(limit + 1):
                number += 1
                if len(line) > limit and not line.endswith(b"\n"):
                    raise self._line_too_long(number)
                try:
                    row = loads(line)
                except json_docs.DuplicateKey as exc:
                    raise duplicate_key(self.name, exc, number, number) from exc
                except orjson.JSONDecodeError as exc:
                    if not line.strip():
                        continue
                    if not _is_utf8(line):
                        raise self._not_utf8() from exc
                    raise json_error(self.name, exc, number, number) from exc
                if type(row) is not dict:
                    raise bad_input(
                        f"{self.name} line {number}",
                        f"expected a JSON object, got {type(row).__name__}",
                        number,
                    )
                yield number, row

    def _csv_rows(self) -> Iterator[tuple[int, Row]]:
        with self._open() as raw:
            text = io.TextIOWrapper(raw, encoding="utf-8-sig", newline="")
            lines = self._bounded_lines(text)
            reader = csv.reader(lines, strict=True, delimiter=self.delimiter)
            try:
                yield from self._csv_records(reader)
            except UnicodeDecodeError as exc:
                raise self._not_utf8() from exc
            except csv.Error as exc:
                raise bad_input(
                    f"{self.name} line {reader.line_num}", f"malformed CSV: {exc}", reader.line_num
                ) from exc

    def _bounded_lines(self, text: IO[str]) -> Iterator[str]:
        """Physical lines of ``text``, each at most ``limits.record_bytes`` characters."""
        limit, number = self.limits.record_bytes, 0
        while line := text.readline(limit + 1):
            number += 1
            if len(line) > limit and not line.endswith("\n"):
                raise self._line_too_long(number)
            yield line

    def _csv_records(self, reader: Any) -> Iterator[tuple[int, Row]]:
        header: list[str] | None = None
        start = 1
        for record in reader:
            line = start
            start = reader.line_num + 1
            if not record:
                continue
            if header is None:
                header = record
                dupes = sorted({h for h in header if header.count(h) > 1})
                if dupes:
                    raise bad_input(
                        f"{self.name} line {line}", f"duplicate column names: {dupes}", line
                    )
                continue
            if len(record) != len(header):
                raise bad_input(
                    f"{self.name} line {line}",
                    f"has {len(record)} cells but the header has {len(header)}",
                    line,
                )
            yield line, dict(zip(header, record, strict=True))

    def _json_rows(self) -> Iterator[tuple[int, Row]]:
        with self._open() as f:
            data = self._read_whole(f)
        if not data.strip():
            return
        try:
            doc = json_docs.loads(data)
        except json_docs.DuplicateKey as exc:
            raise duplicate_key(self.name, exc) from exc
        except orjson.JSONDecodeError as exc:
            if not _is_utf8(data):
                raise not_utf8(self.name, io.BytesIO(data)) from exc
            raise json_error(self.name, exc) from exc
        items, where = self._json_list(doc)
        self.total = len(items)
        for index, item in enumerate(items):
            if type(item) is not dict:
                raise bad_input(
                    f"{self.name} {where}[{index}]",
                    f"expected a JSON object, got {type(item).__name__}",
                    index + 1,
                )
            yield index + 1, item

    def _json_list(self, doc: Any) -> tuple[list[Any], str]:
        if isinstance(doc, list):
            return doc, ""
        if not isinstance(doc, dict):
            raise bad_input(self.name, "a JSON source must be an array or an object wrapping one")
        if self.json_key is not None:
            value = doc.get(self.json_key)
            if not isinstance(value, list):
                raise bad_input(self.name, f"key {self.json_key!r} does not hold a list")
            return value, self.json_key
        lists = [k for k, v in doc.items() if isinstance(v, list)]
        if len(lists) != 1:
            found = ", ".join(repr(k) for k in lists) or "none"
            raise bad_input(
                self.name,
                f"an object source must wrap exactly one list (found {found}); set json_key",
            )
        return doc[lists[0]], lists[0]

    def _parquet_rows(self) -> Iterator[tuple[int, Row]]:
        import pyarrow as pa

        source: Any = self.path
        if self.gz:
            with self._open() as f:
                source = io.BytesIO(self._read_whole(f))
        pf = self._parquet_file(source)
        self.total = int(pf.metadata.num_rows)
        number = 0
        try:
            for batch in pf.iter_batches(batch_size=4096):
                for row in batch.to_pylist():
                    number += 1
                    yield number, {k: _json_value(v) for k, v in row.items()}
        except (pa.ArrowException, OSError, ValueError) as exc:  # a corrupt page or chunk
            raise parquet_error(self.name, exc, None, number) from exc


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _json_value(value: Any) -> Any:
    """A Parquet value as JSON: containers recursed, non-JSON scalars turned into text."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_value(v) for v in value]
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, bytes):
        try:
            return value.decode()
        except UnicodeDecodeError:
            return base64.b64encode(value).decode()
    if isinstance(value, decimal.Decimal | dt.timedelta):
        return str(value)
    return str(value)
