"""Trace storage (SPEC H.4): compressed in the result row, or a file when large.

A trace is its JSON (pydantic) compressed with zlib in ``case_results.trace``. Traces whose JSON
is larger than ``settings.trace_file_bytes`` (1 MiB) are written once to
``BENCHBOOK_HOME/traces/<sha[:2]>/<sha256>.json.gz`` and the row keeps the path and the sha256
of the uncompressed JSON (checked on read).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import zlib
from collections.abc import Generator
from pathlib import Path

from benchbook.contracts.run import Trace
from benchbook.errors import BenchbookError, PayloadTooLarge
from benchbook.settings import Settings

CHUNK_BYTES = 256 * 1024
"""Decompressed bytes a trace is streamed in."""


def encode_trace(settings: Settings, trace: Trace) -> tuple[bytes | None, str | None, str]:
    """``(compressed bytes or None, file path relative to home/traces or None, sha256)``."""
    raw = trace.model_dump_json().encode()
    digest = hashlib.sha256(raw).hexdigest()
    if len(raw) <= settings.trace_file_bytes:
        return zlib.compress(raw, 6), None, digest
    rel = f"{digest[:2]}/{digest}.json.gz"
    path = settings.home / "traces" / rel
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_bytes(gzip.compress(raw, 6))
        tmp.replace(path)
    return None, rel, digest


def trace_chunks(settings: Settings, blob: bytes | None, rel: str | None) -> Generator[bytes]:
    """A stored trace's JSON, decompressed :data:`CHUNK_BYTES` at a time (never held whole).

    Raises:
        BenchbookError: the trace file is missing.
    """
    if blob is not None:
        inflate = zlib.decompressobj()
        data = blob
        while data:
            chunk = inflate.decompress(data, CHUNK_BYTES)
            data = inflate.unconsumed_tail
            if chunk:
                yield chunk
        rest = inflate.flush()
        if rest:
            yield rest
        return
    assert rel is not None
    path = settings.home / "traces" / rel
    try:
        with gzip.open(path, "rb") as stream:
            while chunk := stream.read(CHUNK_BYTES):
                yield chunk
    except OSError as exc:
        raise BenchbookError(f"trace file {path} cannot be read: {exc}") from exc


def load_trace(
    settings: Settings, blob: bytes | None, rel: str | None, max_bytes: int | None = None
) -> Trace:
    """Decode a stored trace; with ``max_bytes``, one whose JSON is larger is refused after
    reading ``max_bytes + 1`` bytes of it (a 300 MB trace read over MCP cost 2.1 GB).

    Raises:
        PayloadTooLarge: the JSON is larger than ``max_bytes`` (``details.limit_bytes``).
        BenchbookError: the trace file is missing or its content does not match its sha256.
    """
    if max_bytes is not None:
        size, parts = 0, []
        chunks = trace_chunks(settings, blob, rel)
        for chunk in chunks:
            size += len(chunk)
            if size > max_bytes:
                chunks.close()
                raise PayloadTooLarge(
                    f"the trace is larger than {max_bytes} bytes (BENCHBOOK_MAX_PAGE_BYTES)",
                    {"limit_bytes": max_bytes, "setting": "max_page_bytes"},
                )
            parts.append(chunk)
        if rel is None:
            return Trace.model_validate_json(b"".join(parts))
    if blob is not None:
        return Trace.model_validate_json(zlib.decompress(blob))
    assert rel is not None
    path = settings.home / "traces" / rel
    try:
        raw = gzip.decompress(path.read_bytes())
    except OSError as exc:
        raise BenchbookError(f"trace file {path} cannot be read: {exc}") from exc
    if hashlib.sha256(raw).hexdigest() != Path(rel).name.split(".")[0]:
        raise BenchbookError(f"trace file {path} does not match its sha256")
    return Trace.model_validate_json(raw)
