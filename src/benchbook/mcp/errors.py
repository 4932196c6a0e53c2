"""One translation of errors into MCP tool results (DESIGN: errors are mapped once per transport).

A ``BenchbookError`` becomes a tool result with ``isError: true`` whose first text block is
``"<code>: <message>"`` — the same code and message the HTTP API answers with — and whose second
text block is the ``details`` JSON; ``structuredContent`` carries the whole HTTP envelope
``{code, message, details}``. Anything else is ``internal_error`` without internals (logged).
"""

from __future__ import annotations

import logging

import mcp.types as types
import orjson

from benchbook.errors import BenchbookError

log = logging.getLogger("benchbook.mcp")


def error_result(exc: BenchbookError) -> types.CallToolResult:
    """The ``isError`` tool result for ``exc`` (``exc.to_dict()`` is the HTTP body too)."""
    envelope = exc.to_dict()
    return types.CallToolResult(
        content=[
            types.TextContent(type="text", text=f"{exc.code}: {exc.message}"),
            types.TextContent(type="text", text=orjson.dumps(exc.details, default=str).decode()),
        ],
        structured_content=envelope,
        is_error=True,
    )


def unexpected_result(tool: str, exc: BaseException) -> types.CallToolResult:
    """``internal_error`` for a bug, logged server-side with the traceback (never sent)."""
    log.error("unhandled error in MCP tool %s", tool, exc_info=exc)
    return error_result(_Internal("internal server error; see the server log"))


class _Internal(BenchbookError):
    code = "internal_error"
    http_status = 500
