"""Readable errors for source bytes that cannot be read (SPEC E.2; DESIGN: bad input names the
file, line and byte, and stores nothing).

Used by the file and folder sources on their error paths only; every function returns an
:class:`InvalidInput` whose message starts with ``<file>`` (and ``line N`` when known) and whose
``details.errors`` is ``[{path, message, row?}]``. The cases covered:

- a path that is a folder or not a regular file (``/dev/null``, a pipe); a missing path is
  :class:`NotFound` instead (the source is not there, not malformed), same message shape;
- text that is not UTF-8: the line, the column and the byte offset of the first bad byte;
- JSON syntax errors: ``line L, column C`` of the document (one JSONL line is its own document,
  so its column is the line's);
- gzip streams that are not gzip, corrupt, or truncated; unreadable Parquet files.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from benchbook.datasets.sources.json_docs import DuplicateKey, non_finite_token
from benchbook.errors import InvalidInput, NotFound

#: What reading a (possibly gzip-compressed) file can raise besides our own errors.
READ_ERRORS: tuple[type[BaseException], ...] = (OSError, EOFError, zlib.error)
_UTF8_HINT = "the file must be UTF-8 encoded (re-save it as UTF-8)"


def bad_input(where: str, message: str, row: int | None = None) -> InvalidInput:
    """``InvalidInput("<where>: <message>")`` with one ``{path, message, row?}`` issue."""
    issue: dict[str, Any] = {"path": where, "message": message}
    if row is not None:
        issue["row"] = row
    return InvalidInput(f"{where}: {message}", {"errors": [issue]})


def check_regular_file(path: Path, name: str) -> None:
    """Raise NotFound for a missing ``path``, InvalidInput unless it is a regular file.

    ``/dev/null`` and pipes exist but hold no file to read; a folder is named as one.
    """
    if path.is_file():
        return
    if not path.exists():
        missing = bad_input(name, "file not found")
        raise NotFound(missing.message, missing.details)
    if path.is_dir():
        raise bad_input(name, "is a folder, not a file")
    raise bad_input(name, "not a regular file (a device, pipe or socket); pass a file with rows")


def first_non_utf8(lines: Iterable[bytes]) -> tuple[int, int, int, int] | None:
    """``(line, column, byte offset, byte)`` of the first byte that is not UTF-8, or None.

    ``lines`` are the file's raw lines (a binary file object iterates them); line and column
    count from 1, the offset from 0 (in the decompressed bytes for a gzip file). A newline never
    falls inside a UTF-8 sequence, so decoding line by line finds the same byte as the whole file.
    """
    offset = 0
    for number, line in enumerate(lines, 1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as exc:
            return number, exc.start + 1, offset + exc.start, line[exc.start]
        offset += len(line)
    return None


def not_utf8(name: str, lines: Iterable[bytes]) -> InvalidInput:
    """The error for a file whose text is not UTF-8, naming the first bad byte's position."""
    found = first_non_utf8(lines)
    if found is None:  # the decoder failed on the last bytes of a truncated sequence
        return bad_input(name, f"not UTF-8 text; {_UTF8_HINT}")
    line, column, offset, byte = found
    message = (
        f"not UTF-8 text: byte 0x{byte:02x} at column {column} (byte offset {offset}); {_UTF8_HINT}"
    )
    return bad_input(f"{name} line {line}", message, line)


def json_error(
    name: str, exc: orjson.JSONDecodeError, line: int | None = None, row: int | None = None
) -> InvalidInput:
    """``<name> line L, column C: not valid JSON: <reason>``.

    ``line`` is the JSONL line the document came from (its column is then the line's); without it
    the document's own line is used.
    """
    token = non_finite_token(exc)
    if token is not None:
        where = f"{name} line {line or exc.lineno}, column {token[1]}"
        message = f"not valid JSON: {token[0]} is not a JSON number (JSON has no NaN or Infinity)"
        return bad_input(where, message, row)
    where = f"{name} line {line or exc.lineno}, column {exc.colno}"
    return bad_input(where, f"not valid JSON: {exc.msg}", row)


def duplicate_key(
    name: str, exc: DuplicateKey, line: int | None = None, row: int | None = None
) -> InvalidInput:
    """``<name> line L: duplicate key 'k' in a JSON record``: the last value would win silently.

    ``line`` is the JSONL line the document came from; without it the document's own line.
    """
    where = f"{name} line {line or exc.line}"
    message = f"duplicate key {exc.key!r} in a JSON record (refused: the last value would win)"
    return bad_input(where, message, row)


def read_error(name: str, exc: BaseException) -> InvalidInput:
    """The error for an OSError / EOFError / zlib.error met while reading ``name``."""
    if isinstance(exc, EOFError):
        message = "the gzip stream is truncated (the data ends before its end-of-stream marker)"
    elif isinstance(exc, gzip.BadGzipFile):
        message = f"not a valid gzip stream: {exc}"
    elif isinstance(exc, zlib.error):
        message = f"the gzip stream is corrupt: {exc}"
    elif isinstance(exc, OSError):
        message = f"cannot read the file: {exc.strerror or exc}"
    else:
        message = f"cannot read the file: {exc}"
    return bad_input(name, message)


def parquet_error(
    name: str, exc: BaseException, size: int | None = None, after_row: int = 0
) -> InvalidInput:
    """``<name>: not a readable Parquet file: <reason>`` for what pyarrow raised
    (``ArrowInvalid``…); ``size`` 0 says the file is empty, ``after_row`` where reading stopped."""
    if size == 0:
        reason = "the file is empty (0 bytes)"
    elif after_row:
        reason = f"reading stopped after row {after_row}: {exc}"
    else:
        reason = str(exc)
    return bad_input(name, f"not a readable Parquet file: {reason}")
