"""A real Benchbook server (uvicorn on a free port, in a thread) and a blocking wrapper around
the SDK's MCP client, so synchronous tests can talk MCP over streamable HTTP or stdio."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import uvicorn
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import CallToolResult
from sqlalchemy import Engine

from benchbook.app import create_app
from benchbook.settings import Settings


@contextmanager
def live_server(settings: Settings, engine: Engine) -> Iterator[str]:
    """Serve ``create_app(settings, engine)`` with uvicorn on 127.0.0.1; yields the base URL."""
    app = create_app(settings, engine=engine)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()


@dataclass
class McpSession:
    """An initialized SDK ``Client``, driven from synchronous code through a portal."""

    portal: BlockingPortal
    client: Client

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> CallToolResult:
        """``tools/call``; tool errors come back as results with ``is_error``."""
        result: CallToolResult = self.portal.call(self.client.call_tool, name, arguments or {})
        return result

    def tool_names(self) -> list[str]:
        """The names of ``tools/list``, in the server's order."""
        listed = self.portal.call(self.client.list_tools)
        return [t.name for t in listed.tools]

    def tools(self) -> dict[str, Any]:
        """``name → Tool`` of ``tools/list``."""
        listed = self.portal.call(self.client.list_tools)
        return {t.name: t for t in listed.tools}


@contextmanager
def mcp_http(base_url: str, key: str | None = None) -> Iterator[McpSession]:
    """An MCP session over streamable HTTP at ``base_url/mcp``, with ``Bearer key`` if given."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    with start_blocking_portal() as portal:
        http = create_mcp_http_client(headers=headers)
        transport = streamable_http_client(f"{base_url}/mcp", http_client=http)
        with (
            portal.wrap_async_context_manager(http),
            portal.wrap_async_context_manager(Client(transport)) as client,
        ):
            yield McpSession(portal, client)


@contextmanager
def mcp_stdio(command: str, args: list[str], env: dict[str, str]) -> Iterator[McpSession]:
    """An MCP session with a subprocess speaking MCP on its stdin/stdout."""
    params = StdioServerParameters(command=command, args=args, env=env)
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(Client(params)) as client,
    ):
        yield McpSession(portal, client)


def outcome(result: CallToolResult) -> tuple[str, str]:
    """``("ok", "")`` or the error's ``(code, message)`` from its ``"code: message"`` text."""
    if not result.is_error:
        return "ok", ""
    text = result.content[0].text  # type: ignore[union-attr]
    code, _, message = text.partition(": ")
    return code, message
