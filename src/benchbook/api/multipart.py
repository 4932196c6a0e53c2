"""Streaming ``multipart/form-data`` uploads: the file part goes straight to a temporary file.

Starlette's own form parser spools files into anonymous temporary files that have no path, so a
service that reads a ``Path`` would need a second copy. Here the ``file`` part is written chunk by
chunk into a named temporary file (removed when the ``async with`` block ends) and the other parts
are kept as text. The whole body is bounded by ``max_upload_bytes`` (413 past it).
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from fastapi import Request
from python_multipart import MultipartParser
from python_multipart.exceptions import FormParserError
from python_multipart.multipart import parse_options_header

from benchbook.api.uploads import declared_length, too_large
from benchbook.errors import InvalidInput

if TYPE_CHECKING:
    from python_multipart.multipart import MultipartCallbacks

FILE_FIELD = "file"
MAX_FIELD_BYTES = 64 * 1024 * 1024
_SAFE_SUFFIX = re.compile(r"^\.[A-Za-z0-9]{1,10}$")


@dataclass
class Upload:
    """A parsed multipart body: text ``fields`` and at most one ``file`` saved on disk.

    ``file_name`` is the client's file name (its extension picks the format, ``.gz`` accepted);
    ``size_bytes`` counts the file part's bytes.
    """

    fields: dict[str, str] = field(default_factory=dict)
    file: Path | None = None
    file_name: str | None = None
    size_bytes: int = 0


def _suffix(file_name: str) -> str:
    """The name's extensions (``.jsonl.gz``) when they are plain, so the temp file keeps them."""
    parts = [s for s in Path(file_name).suffixes[-2:] if _SAFE_SUFFIX.match(s)]
    return "".join(parts)


class _Collector:
    """python-multipart callbacks that route part bytes to a field buffer or the upload file."""

    def __init__(self, upload: Upload) -> None:
        self.upload = upload
        self.header_name = b""
        self.header_value = b""
        self.disposition = b""
        self.name = ""
        self.buffer = bytearray()
        self.sink: IO[bytes] | None = None
        self.ended = False

    def on_part_begin(self) -> None:
        self.disposition, self.name, self.buffer, self.sink = b"", "", bytearray(), None

    def on_header_field(self, data: bytes, start: int, end: int) -> None:
        self.header_name += data[start:end]

    def on_header_value(self, data: bytes, start: int, end: int) -> None:
        self.header_value += data[start:end]

    def on_header_end(self) -> None:
        if self.header_name.lower() == b"content-disposition":
            self.disposition = self.header_value
        self.header_name, self.header_value = b"", b""

    def on_headers_finished(self) -> None:
        _, options = parse_options_header(self.disposition)
        if b"name" not in options:
            raise InvalidInput("a multipart part has no name in its Content-Disposition")
        self.name = options[b"name"].decode("utf-8", "replace")
        if b"filename" not in options:
            return
        if self.name != FILE_FIELD or self.upload.file is not None:
            raise InvalidInput(f"send exactly one file, in the part named {FILE_FIELD!r}")
        file_name = options[b"filename"].decode("utf-8", "replace")
        handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed in on_part_end / cleanup
            prefix="benchbook-upload-", suffix=_suffix(file_name), delete=False
        )
        self.upload.file, self.upload.file_name, self.sink = Path(handle.name), file_name, handle

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        if self.sink is not None:
            self.sink.write(data[start:end])
            self.upload.size_bytes += end - start
            return
        if len(self.buffer) + end - start > MAX_FIELD_BYTES:
            raise InvalidInput(f"multipart field {self.name!r} exceeds {MAX_FIELD_BYTES} bytes")
        self.buffer += data[start:end]

    def on_part_end(self) -> None:
        if self.sink is not None:
            self.sink.close()
            self.sink = None
        else:
            self.upload.fields[self.name] = self.buffer.decode("utf-8", "replace")

    def on_end(self) -> None:
        self.ended = True


def _boundary(request: Request) -> bytes:
    _, params = parse_options_header(request.headers.get("content-type", ""))
    boundary = params.get(b"boundary")
    if not boundary:
        raise InvalidInput("multipart body without a boundary in its Content-Type")
    return boundary


async def _parse(request: Request, limit_bytes: int, collector: _Collector) -> None:
    declared_length(request, limit_bytes)
    parser = MultipartParser(_boundary(request), _callbacks(collector))
    seen = 0
    try:
        async for chunk in request.stream():
            seen += len(chunk)
            if seen > limit_bytes:
                raise too_large(limit_bytes)
            parser.write(chunk)
        parser.finalize()
    except FormParserError as exc:
        raise InvalidInput(f"invalid multipart body: {exc}") from exc
    if not collector.ended:  # a cut-off upload must never import as a shorter file
        raise InvalidInput("multipart body ended before its closing boundary (truncated upload?)")


def _callbacks(c: _Collector) -> MultipartCallbacks:
    return {
        "on_part_begin": c.on_part_begin,
        "on_part_data": c.on_part_data,
        "on_part_end": c.on_part_end,
        "on_header_field": c.on_header_field,
        "on_header_value": c.on_header_value,
        "on_header_end": c.on_header_end,
        "on_headers_finished": c.on_headers_finished,
        "on_end": c.on_end,
    }


@asynccontextmanager
async def multipart_upload(request: Request, limit_bytes: int) -> AsyncIterator[Upload]:
    """Parse a multipart body; yield its :class:`Upload`; delete the saved file afterwards.

    Raises:
        PayloadTooLarge: the body exceeds ``limit_bytes`` (413).
        InvalidInput: malformed multipart, a second file, or a file part not named ``file``.
    """
    upload = Upload()
    collector = _Collector(upload)
    try:
        await _parse(request, limit_bytes, collector)
        yield upload
    finally:
        if collector.sink is not None:
            collector.sink.close()
        if upload.file is not None:
            with suppress(OSError):
                upload.file.unlink()
