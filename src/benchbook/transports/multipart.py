"""Streaming ``multipart/form-data`` uploads: each file part goes straight to a temporary file.

Starlette's own form parser spools files into anonymous temporary files that have no path (and
keeps up to 1 MiB of each in memory), so a service that reads a ``Path`` would need a second
copy. Here every ``file`` part is written chunk by chunk into a named temporary file (removed
when the ``async with`` block ends) and the other parts are kept as text. The whole body is
bounded by ``max_upload_bytes`` and the number of file parts by ``max_upload_files`` (413 past
either, while streaming). Shared by the API and the dashboard (``transports/``).
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from fastapi import Request
from python_multipart import MultipartParser
from python_multipart.exceptions import FormParserError
from python_multipart.multipart import parse_options_header

from benchbook.errors import InvalidInput, PayloadTooLarge

if TYPE_CHECKING:
    from python_multipart.multipart import MultipartCallbacks

FILE_FIELD = "file"
#: A text field saying the ``file`` parts are a folder's task files even when there is one.
FOLDER_FIELD = "folder"
MAX_FIELD_BYTES = 64 * 1024 * 1024
_SAFE_SUFFIX = re.compile(r"^\.[A-Za-z0-9]{1,10}$")


@dataclass(frozen=True)
class SentFile:
    """One saved file part: its temporary ``path`` and the client's file ``name`` as sent (it
    may hold folders, ``examples/chrome/<id>.json``, when a folder was sent file by file)."""

    path: Path
    name: str


@dataclass
class Upload:
    """A parsed multipart body: text ``fields`` and the ``files`` saved on disk, in body order.

    ``size_bytes`` counts the bytes of every file part.
    """

    fields: dict[str, str] = field(default_factory=dict)
    files: list[SentFile] = field(default_factory=list)
    size_bytes: int = 0

    @property
    def file(self) -> Path | None:
        """The one file's path (None without files; the first of several)."""
        return self.files[0].path if self.files else None

    @property
    def folder(self) -> bool:
        """Whether the file parts are the task files of a folder: several parts, or one sent
        with ``folder=1`` (a folder holding one task file: read as a single file, an OSWorld
        task would be a JSON object source, another source entirely)."""
        return len(self.files) > 1 or self.fields.get(FOLDER_FIELD) == "1"

    @property
    def file_name(self) -> str | None:
        """The one file's client name (its extension picks the format, ``.gz`` accepted)."""
        return self.files[0].name if self.files else None


def too_large(limit_bytes: int, seen_bytes: int | None = None) -> PayloadTooLarge:
    """The 413 error for a body over ``limit_bytes`` (``seen_bytes`` when known)."""
    details: dict[str, Any] = {"max_upload_bytes": limit_bytes}
    if seen_bytes is not None:
        details["size_bytes"] = seen_bytes
    return PayloadTooLarge(
        f"request body exceeds the limit of {limit_bytes} bytes"
        " (raise BENCHBOOK_MAX_UPLOAD_BYTES to accept it)",
        details,
    )


def declared_length(request: Request, limit_bytes: int) -> int | None:
    """``Content-Length`` as an int; 413 at once when it already exceeds ``limit_bytes``."""
    raw = request.headers.get("content-length")
    if raw is None:
        return None
    try:
        size = int(raw)
    except ValueError as exc:
        raise InvalidInput(f"Content-Length {raw!r} is not a number") from exc
    if size > limit_bytes:
        raise too_large(limit_bytes, size)
    return size


def too_many_files(limit: int) -> PayloadTooLarge:
    """The 413 error for a body with more than ``limit`` file parts."""
    return PayloadTooLarge(
        f"the upload holds more than {limit} files; send fewer (a zip of the folder counts as"
        " one) or raise BENCHBOOK_MAX_UPLOAD_FILES",
        {"max_upload_files": limit},
    )


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
MAX_NAME_CHARS = 255


def sent_name(raw: str) -> str:
    """The name an upload is recorded under (a version's lineage, ``source.file``): as sent
    (a folder picked whole sends each file's relative path, which the folder import reads and
    refuses when unsafe), with control characters — which could drive a terminal that prints
    the lineage — as ``?``, at most :data:`MAX_NAME_CHARS` characters (its end kept)."""
    return _CONTROL.sub("?", raw)[-MAX_NAME_CHARS:]


def _suffix(file_name: str) -> str:
    """The name's extensions (``.jsonl.gz``) when they are plain, so the temp file keeps them."""
    parts = [s for s in Path(file_name).suffixes[-2:] if _SAFE_SUFFIX.match(s)]
    return "".join(parts)


class _Collector:
    """python-multipart callbacks that route part bytes to a field buffer or the upload file."""

    def __init__(self, upload: Upload, max_files: int) -> None:
        self.upload = upload
        self.max_files = max_files
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
        if self.name != FILE_FIELD:
            raise InvalidInput(f"send files in parts named {FILE_FIELD!r}, not {self.name!r}")
        if len(self.upload.files) >= self.max_files:
            raise too_many_files(self.max_files)
        file_name = sent_name(options[b"filename"].decode("utf-8", "replace"))
        handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed in on_part_end / cleanup
            prefix="benchbook-upload-", suffix=_suffix(file_name), delete=False
        )
        self.upload.files.append(SentFile(Path(handle.name), file_name))
        self.sink = handle

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
async def multipart_upload(
    request: Request, limit_bytes: int, max_files: int = 1
) -> AsyncIterator[Upload]:
    """Parse a multipart body; yield its :class:`Upload`; delete the saved files afterwards.

    Args:
        limit_bytes: bound on the whole body (``settings.max_upload_bytes``).
        max_files: bound on the number of file parts (``settings.max_upload_files``).

    Raises:
        PayloadTooLarge: the body exceeds ``limit_bytes``, or it holds more than ``max_files``
            file parts (413, raised at the first part past the bound).
        InvalidInput: malformed multipart, or a file part not named ``file``.
    """
    upload = Upload()
    collector = _Collector(upload, max_files)
    try:
        await _parse(request, limit_bytes, collector)
        yield upload
    finally:
        if collector.sink is not None:
            collector.sink.close()
        for sent in upload.files:
            with suppress(OSError):
                sent.path.unlink()
