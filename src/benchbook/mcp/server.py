"""The MCP server (official ``mcp`` SDK, low-level ``Server``) over both transports.

- Streamable HTTP at ``/mcp`` inside the FastAPI app (:func:`mount_mcp`): stateless JSON
  responses, authenticated by the transports' principal resolution (``transports/auth.py``
  — ``Authorization: Bearer bb_…``; the local admin while the installation has no users) on
  every HTTP request — missing, unknown or revoked credentials are HTTP 401 with
  ``WWW-Authenticate: Bearer``, as MCP clients expect — and again per tool call.
- stdio (:func:`run_stdio`, ``benchbook mcp``): the principal of ``BENCHBOOK_API_KEY`` when set
  (checked on every call), else the local admin (``transports/auth.py:local_principal``).

Tools are generated from ``services.registry.OPERATIONS`` (``mcp/tools.py``); errors are tool
results with ``isError`` (``mcp/errors.py``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp.types as types
from fastapi import FastAPI
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from sqlalchemy import Engine
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

import benchbook
from benchbook.errors import BenchbookError, NotFound, Unauthenticated
from benchbook.mcp.errors import error_result, unexpected_result
from benchbook.mcp.tools import OperationTool, operation_tools
from benchbook.services.context import Context, Principal, open_engine
from benchbook.settings import Settings
from benchbook.transports.auth import local_principal, request_principal

MCP_PATH = "/mcp"
RequestContext = ServerRequestContext[Any, Any]
PrincipalOf = Callable[[RequestContext], Principal]
"""Who is calling, for one tool call (blocking; may raise Unauthenticated or Forbidden)."""

INSTRUCTIONS = (
    "Benchbook keeps versioned evaluation datasets. Discover with list_datasets and "
    "list_dataset_versions; read cases with get_dataset (paged) or export_dataset. Versions are "
    "immutable: to change cases, register a NEW version of the same id (validate_dataset shows "
    "the existing versions). Errors come back as '<code>: <message>' with code one of "
    "invalid_input, unauthenticated, forbidden, not_found, conflict, payload_too_large, "
    "upstream_error, unavailable (retry after details.retry_after_s)."
)


def build_server(principal_of: PrincipalOf, engine: Engine, settings: Settings) -> Server[Any]:
    """A low-level MCP server listing one tool per operation and running them as the caller."""
    tools = operation_tools()

    async def list_tools(
        _rc: RequestContext, _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[t.tool for t in tools.values()])

    async def call_tool(
        rc: RequestContext, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        op = tools.get(params.name)
        if op is None:
            known = sorted(tools)
            return error_result(NotFound(f"no tool named {params.name!r}", {"tools": known}))
        arguments = dict(params.arguments or {})
        return await anyio.to_thread.run_sync(
            lambda: _run(op, principal_of, rc, arguments, engine, settings)
        )

    return Server(
        "benchbook",
        version=benchbook.__version__,
        title="Benchbook",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _run(
    op: OperationTool,
    principal_of: PrincipalOf,
    rc: RequestContext,
    arguments: dict[str, Any],
    engine: Engine,
    settings: Settings,
) -> types.CallToolResult:
    """Authenticate (401) → arguments (400) → the service's own checks; errors become results."""
    try:
        ctx = Context(principal=principal_of(rc), engine=engine, settings=settings)
        return op.call(ctx, arguments)
    except BenchbookError as exc:
        return error_result(exc)
    except Exception as exc:
        return unexpected_result(op.name, exc)


def http_principal(engine: Engine, settings: Settings) -> PrincipalOf:
    """The transports' principal resolution, applied to the HTTP request carrying the call."""

    def principal_of(rc: RequestContext) -> Principal:
        if not isinstance(rc.request, Request):
            raise Unauthenticated("no HTTP request to authenticate")
        return request_principal(rc.request, engine, settings)

    return principal_of


def stdio_principal(engine: Engine, settings: Settings) -> PrincipalOf:
    """``settings.api_key`` (``BENCHBOOK_API_KEY``) resolved on every call, else local admin."""
    return lambda _rc: local_principal(engine, settings)


Gate = Callable[[Request], object]
"""Authenticates an HTTP request to ``/mcp`` (blocking); raises Unauthenticated."""


def http_gate(engine: Engine, settings: Settings) -> Gate:
    """The HTTP principal resolution, applied to each request before any MCP message is read."""
    return lambda request: request_principal(request, engine, settings)


def unauthorized(exc: Unauthenticated) -> JSONResponse:
    """HTTP 401 with ``WWW-Authenticate: Bearer`` (MCP authorization spec, RFC 6750 §3)."""
    body = {"code": exc.code, "message": exc.message, "details": exc.details}
    challenge = 'Bearer realm="benchbook", error="invalid_token"'
    return JSONResponse(body, status_code=401, headers={"WWW-Authenticate": challenge})


class McpEndpoint:
    """The ASGI app at ``/mcp``: authenticates the HTTP request (401 with a Bearer challenge
    when it carries no valid credentials), then hands it to the session manager the lifespan
    started. Each tool call authenticates again, as its own principal resolution."""

    def __init__(self, server: Server[Any], max_body_bytes: int, gate: Gate | None = None) -> None:
        self.server = server
        self.max_body_bytes = max_body_bytes
        self.gate = gate
        self.manager: StreamableHTTPSessionManager | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Run a fresh session manager (one per app lifespan; the SDK's cannot restart)."""
        manager = StreamableHTTPSessionManager(
            app=self.server,
            json_response=True,
            stateless=True,
            max_request_body_size=self.max_body_bytes,
        )
        async with manager.run():
            self.manager = manager
            try:
                yield
            finally:
                self.manager = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.manager is None:
            body = {
                "code": "unavailable",
                "message": "the MCP endpoint runs only while the app's lifespan is running",
                "details": {},
            }
            await JSONResponse(body, status_code=503)(scope, receive, send)
            return
        if self.gate is not None and scope["type"] == "http":
            gate, request = self.gate, Request(scope)
            try:
                await anyio.to_thread.run_sync(lambda: gate(request))
            except Unauthenticated as exc:
                await unauthorized(exc)(scope, receive, send)
                return
            except BenchbookError:
                pass  # e.g. a cross-origin write: refused per call, as a tool result
        await self.manager.handle_request(scope, receive, send)


def mount_mcp(app: FastAPI) -> None:
    """Serve MCP over streamable HTTP at ``/mcp`` of ``app`` (built by ``create_app``).

    The session manager runs inside the app's lifespan, wrapped around the existing one.
    """
    engine: Engine = app.state.engine
    settings: Settings = app.state.settings
    server = build_server(http_principal(engine, settings), engine, settings)
    endpoint = McpEndpoint(server, settings.max_upload_bytes, http_gate(engine, settings))
    app.router.routes.append(Route(MCP_PATH, endpoint=endpoint, include_in_schema=False))
    outer = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(a: Any) -> AsyncIterator[Any]:
        async with endpoint.running(), outer(a) as state:
            yield state

    app.router.lifespan_context = lifespan
    app.state.mcp_server = server


async def run_stdio(settings: Settings) -> None:
    """Serve MCP on stdin/stdout until the client closes it (``benchbook mcp``)."""
    engine = open_engine(settings)
    server = build_server(stdio_principal(engine, settings), engine, settings)
    try:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        engine.dispose()
