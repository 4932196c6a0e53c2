"""Request bounds for every route of the app: body limits and request strings.

Body limits for the JSON routes FastAPI parses itself and for every dashboard form
route (SPEC D robustness; issue 9: "body limits everywhere, before reading").

Routes that declare a body model (``APIRoute.body_field``) get their body read fully in memory
by FastAPI, so each has a small bound: :data:`DEFAULT_JSON_BODY_BYTES` unless the route names its
own in ``openapi_extra`` under :data:`LIMIT_KEY` (bytes; it is also shown in the OpenAPI
document). Routes without a body model read the raw stream themselves, bounded by
``settings.max_upload_bytes`` (``api/uploads.py``), and pass through untouched.

:class:`BodyLimits` is a pure ASGI middleware on every path but ``/mcp``: a ``Content-Length``
over the limit is refused before reading; a chunked body is refused at the first chunk past the
limit.
Both answer 413 with the error envelope ``{code: "payload_too_large", message}``, the message
naming the limit. (Starlette's own ``max_body_size`` is not used: for a declared length it
answers plain text, not the envelope.)

:func:`request_text` (an app-wide dependency) refuses NUL and lone surrogates in any path, query
or parsed JSON body string.
"""

from __future__ import annotations

from typing import Any

from fastapi import HTTPException, Request
from fastapi.routing import APIRoute
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from benchbook.services.bounds import check_text

DEFAULT_JSON_BODY_BYTES = 1024 * 1024
"""Bound for JSON bodies of routes that do not name their own (1 MiB)."""
LIMIT_KEY = "x-max-body-bytes"
"""``openapi_extra`` key carrying a route's body bound in bytes."""
UPLOAD_LIMIT = "max_upload_bytes"
"""A :data:`LIMIT_KEY` value meaning ``settings.max_upload_bytes`` (dashboard uploads)."""
BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
UNBOUNDED_PREFIXES = ("/mcp",)
"""Paths bounded elsewhere (the MCP session manager has its own ``max_request_body_size``)."""


def body_limit(limit_bytes: int | str) -> dict[str, Any]:
    """``openapi_extra`` for a route whose body is bounded by ``limit_bytes`` (or
    :data:`UPLOAD_LIMIT`)."""
    return {LIMIT_KEY: limit_bytes}


def route_limit(route: BaseRoute, upload_limit: int) -> int | None:
    """The body bound of ``route`` in bytes; None when the route reads its own raw stream.

    API routes are bounded when FastAPI parses their body (``body_field``) or when they name
    a bound; dashboard routes (outside ``/api/``), which read forms themselves, always are:
    their own bound, else :data:`DEFAULT_JSON_BODY_BYTES`.
    """
    if not isinstance(route, APIRoute):
        return None
    extra = route.openapi_extra or {}
    if LIMIT_KEY in extra:
        limit = extra[LIMIT_KEY]
        return upload_limit if limit == UPLOAD_LIMIT else int(limit)
    if route.body_field is None and route.path.startswith("/api/"):
        return None
    return DEFAULT_JSON_BODY_BYTES


class BodyLimits:
    """ASGI middleware bounding the JSON bodies of ``/api/`` routes (see the module doc).

    The limit is looked up lazily, at the route's first read of the body, when routing has put
    the matched route into ``scope["route"]``; a refusal raises ``HTTPException(413)``, which
    the API's error handler turns into the envelope.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] not in BODY_METHODS
            or scope["path"].startswith(UNBOUNDED_PREFIXES)
        ):
            await self.app(scope, receive, send)
            return
        await self.app(scope, _bounded(scope, receive), send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def too_large(limit_bytes: int, size_bytes: int | None = None) -> HTTPException:
    """The 413 for a body over ``limit_bytes`` (``size_bytes`` when declared)."""
    seen = f" (Content-Length {size_bytes})" if size_bytes is not None else ""
    return HTTPException(
        413, f"request body exceeds this route's limit of {limit_bytes} bytes{seen}"
    )


def _bounded(scope: Scope, receive: Receive) -> Receive:
    """``receive`` counting body bytes against the matched route's limit."""
    state: dict[str, int | None] = {}

    async def bounded() -> Message:
        if "limit" not in state:
            route = scope.get("route")
            uploads = int(scope["app"].state.settings.max_upload_bytes)
            state["limit"] = route_limit(route, uploads) if isinstance(route, BaseRoute) else None
            state["seen"] = 0
            declared = _content_length(scope)
            limit = state["limit"]
            if limit is not None and declared is not None and declared > limit:
                raise too_large(limit, declared)
        message = await receive()
        limit = state["limit"]
        if limit is not None and message["type"] == "http.request":
            seen = (state["seen"] or 0) + len(message.get("body", b""))
            state["seen"] = seen
            if seen > limit:
                raise too_large(limit)
        return message

    return bounded


async def request_text(request: Request) -> None:
    """Refuse NUL and lone surrogates in any path, query or JSON body string (400 naming the
    field) before a route runs: a database cannot store them (app-wide dependency).

    Only routes with a declared body model are checked: FastAPI has already parsed (and
    cached) their JSON; raw-stream routes parse with orjson and strict contracts themselves.
    """
    check_text(dict(request.path_params), "path")
    check_text(dict(request.query_params), "query")
    route = request.scope.get("route")
    if isinstance(route, APIRoute) and route.body_field is not None:
        try:
            body = await request.json()
        except ValueError:
            return  # FastAPI reports the malformed body itself
        check_text(body)
