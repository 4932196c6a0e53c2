"""``benchbook mcp``: the MCP server on stdin/stdout for local agents (Claude Desktop …)."""

from __future__ import annotations

import anyio

from benchbook.cli.app import app, handle_errors
from benchbook.settings import get_settings


@app.command("mcp")
@handle_errors
def mcp_stdio() -> None:
    """Serve MCP over stdio: one tool per operation, as BENCHBOOK_API_KEY's user or the local admin.

    stdout carries only the protocol; see docs/mcp.md for client configuration.
    """
    from benchbook.mcp.server import run_stdio

    anyio.run(run_stdio, get_settings())
