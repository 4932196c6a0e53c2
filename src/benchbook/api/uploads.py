"""Reading large request bodies once, within ``settings.max_upload_bytes``.

A dataset body (``POST /api/datasets``) may be hundreds of MiB (SPEC D: ≥ 256 MiB accepted).
It is read from ``request.stream()`` into ONE buffer — pre-sized from ``Content-Length`` when the
client sends it — and parsed with orjson straight from that buffer, so the raw bytes are never
copied into a second object. Multipart file parts are spooled to a temporary file instead.
"""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import Request

from benchbook.datasets.sources import json_docs
from benchbook.errors import InvalidInput
from benchbook.services.bounds import check_text
from benchbook.transports.multipart import declared_length, too_large


async def read_body(request: Request, limit_bytes: int) -> bytearray:
    """The whole request body in one ``bytearray`` of at most ``limit_bytes``.

    Raises:
        PayloadTooLarge: the declared or streamed size exceeds ``limit_bytes`` (413); reading
            stops at the first chunk past the limit.
    """
    size = declared_length(request, limit_bytes)
    if not size:
        buf = bytearray()
        async for chunk in request.stream():
            if len(buf) + len(chunk) > limit_bytes:
                raise too_large(limit_bytes)
            buf += chunk
        return buf
    # Known length: allocate once and fill in place, so a huge body is never re-copied.
    buf = bytearray(size)
    view = memoryview(buf)
    filled = 0
    async for chunk in request.stream():
        end = filled + len(chunk)
        if end > size:
            raise InvalidInput(f"request body is longer than its Content-Length {size}")
        view[filled:end] = chunk
        filled = end
    view.release()
    if filled < size:
        del buf[filled:]
    return buf


def parse_json_body(buf: bytearray | bytes, what: str = "request body") -> Any:
    """Parse JSON with orjson; a syntax error is InvalidInput naming line, column and position.

    Raises:
        InvalidInput: empty body; malformed JSON (``details`` has ``line``, ``column``
            (1-based) and ``position`` (0-based character offset) as reported by orjson); NUL
            or a lone surrogate in a string or key (the field named).
    """
    if not buf:
        raise InvalidInput(f"{what} is empty; send a JSON object")
    try:
        payload = json_docs.loads(buf)  # integers beyond 64 bits stay exact
    except json_docs.DuplicateKey as exc:
        message = f"duplicate key {exc.key!r} in one JSON object at line {exc.line}"
        raise InvalidInput(
            f"{what} is not valid: {message}",
            {"line": exc.line, "errors": [{"path": "(body)", "message": message}]},
        ) from exc
    except orjson.JSONDecodeError as exc:
        reason, column = exc.msg, exc.colno
        token = json_docs.non_finite_token(exc)
        if token is not None:
            reason = f"{token[0]} is not a JSON number (JSON has no NaN or Infinity)"
            column = token[1]
        raise InvalidInput(
            f"{what} is not valid JSON: {reason} at line {exc.lineno}, column {column}"
            f" (position {exc.pos})",
            {
                "line": exc.lineno,
                "column": column,
                "position": exc.pos,
                "errors": [{"path": "(body)", "message": reason}],
            },
        ) from exc
    check_text(payload)  # NUL or a lone surrogate: 400 naming the field, as for parsed bodies
    return payload
