"""Errors on pages: the one place an error becomes an HTML error page.

Page routers use :class:`PageRoute`: a ``LoginRequired`` becomes a 303 to ``/login``, a
``BenchbookError`` an error page with the error's HTTP status (403, 404, 409 …) and message, and
a query or path value of the wrong shape (``?after=zzz``) a 400 page naming the parameter.
The dashboard's small JSON endpoints use :class:`JsonRoute`: ``LoginRequired`` becomes the API's
401 envelope, and other errors reach the API's handlers (``api/errors.py``) unchanged.
:func:`install_page_errors` makes the app's routing errors (unknown path 404, wrong method 405)
and unexpected 500s pages too, everywhere but ``/api``, ``/mcp`` and the JSON endpoints.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, RedirectResponse
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException as StarletteHTTPException

from benchbook.errors import BenchbookError, TooManyRequests, Unauthenticated, Unavailable
from benchbook.transports.methods import allowed_methods
from benchbook.web.render import render
from benchbook.web.session import LoginRequired, Page, login_url, page_caller

Handler = Callable[[Request], Coroutine[Any, Any, Response]]
ErrorHandler = Callable[[Request, Any], Response | Awaitable[Response]]

log = logging.getLogger("benchbook.web")

#: Path prefixes whose errors stay the API's JSON envelope.
JSON_PREFIXES = ("/api", "/mcp")

TITLES = {
    400: "That did not work",
    401: "Please log in",
    403: "Not allowed",
    404: "Not found",
    405: "Not allowed here",
    409: "Conflict",
    413: "Too large",
    500: "Something broke",
    502: "Upstream problem",
}


def _viewer(request: Request) -> Page | None:
    """The caller for the layout of an error page, if there is one."""
    try:
        return page_caller(request) if request.method == "GET" else None
    except (BenchbookError, LoginRequired):
        return None


def error_page(
    request: Request, status: int, message: str, details: Any = None, with_viewer: bool = True
) -> Response:
    """An error page with ``status``: a title for the status and the error's message.
    ``details.errors`` (``[{path, message}]``) are listed; ``with_viewer=False`` renders the
    logged-out layout without touching the database (for 500s)."""
    errors = details.get("errors") if isinstance(details, dict) else None
    return render(
        request,
        _viewer(request) if with_viewer else None,
        "error.html",
        status_code=status,
        title=TITLES.get(status, "Something went wrong"),
        status=status,
        message=message,
        errors=errors or [],
    )


class PageRoute(APIRoute):
    """An HTML route: login redirects and error pages instead of JSON envelopes."""

    def get_route_handler(self) -> Handler:
        handler = super().get_route_handler()

        async def page_handler(request: Request) -> Response:
            try:
                return await handler(request)
            except LoginRequired as exc:
                return RedirectResponse(login_url(exc.next_url), status_code=303)
            except BenchbookError as exc:
                page = error_page(request, exc.http_status, exc.message, exc.details)
                if isinstance(exc, TooManyRequests | Unavailable):
                    page.headers["Retry-After"] = str(exc.retry_after_s)
                return page
            except RequestValidationError as exc:
                return invalid_request_page(request, exc)

        return page_handler


def _issue(err: Any) -> dict[str, str]:
    """``{path, message}`` for one validation error; ``path`` is e.g. ``query parameter after``
    and the message quotes the value given."""
    loc = [str(p) for p in err.get("loc", ())]
    where = f"{loc[0]} parameter {'.'.join(loc[1:])}" if len(loc) > 1 else "request"
    reason = str(err.get("msg", "invalid")).removeprefix("Value error, ")
    given = err.get("input")
    shown = f"“{given}” is not valid: " if isinstance(given, str | int | float) else ""
    return {"path": where, "message": shown + reason}


def invalid_request_page(request: Request, exc: RequestValidationError) -> Response:
    """A 400 page for query/path values of the wrong shape, naming each parameter and value:
    ``Bad query parameter after: “zzz” is not valid: Input should be a valid integer…``."""
    issues = [_issue(err) for err in exc.errors()]
    first = issues[0] if issues else {"path": "request", "message": "invalid"}
    details = {"errors": issues} if len(issues) > 1 else None
    return error_page(request, 400, f"Bad {first['path']}: {first['message']}", details)


def wants_page(request: Request) -> bool:
    """True unless the path is under ``/api`` or ``/mcp`` or the route is a :class:`JsonRoute`."""
    path = request.url.path
    if any(path == p or path.startswith(p + "/") for p in JSON_PREFIXES):
        return False
    return not isinstance(request.scope.get("route"), JsonRoute)


async def _answer(handler: ErrorHandler, request: Request, exc: Exception) -> Response:
    """What an exception handler answers, awaited when it is a coroutine."""
    answer = handler(request, exc)
    return await answer if inspect.isawaitable(answer) else answer


def install_page_errors(app: FastAPI) -> None:
    """Make routing errors (404 unknown path, 405 wrong method, other HTTP errors) and
    unexpected errors (500) HTML pages where :func:`wants_page`; elsewhere the handlers already
    installed (``api/errors.install_error_handlers``, which must run first) answer unchanged."""
    api_http: ErrorHandler = app.exception_handlers[StarletteHTTPException]
    api_unexpected: ErrorHandler = app.exception_handlers[Exception]

    async def http_error(request: Request, exc: Any) -> Response:
        if not wants_page(request):
            return await _answer(api_http, request, exc)
        assert isinstance(exc, StarletteHTTPException)
        message = str(exc.detail)
        if exc.status_code == 404 and message == "Not Found":
            message = f"There is no page at {request.url.path}."
        elif exc.status_code == 405:
            message = f"{request.method} is not allowed on {request.url.path}."
        page = error_page(request, exc.status_code, message)
        page.headers.update(exc.headers or {})
        if exc.status_code == 405:
            page.headers["Allow"] = allowed_methods(request)
        return page

    async def unexpected(request: Request, exc: Exception) -> Response:
        if not wants_page(request):
            return await _answer(api_unexpected, request, exc)
        log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
        message = "Internal server error; see the server log."
        return error_page(request, 500, message, with_viewer=False)

    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(Exception, unexpected)


class JsonRoute(APIRoute):
    """A JSON route of the dashboard's scripts: 401 envelope instead of a login redirect."""

    def get_route_handler(self) -> Handler:
        handler = super().get_route_handler()

        async def json_handler(request: Request) -> Response:
            try:
                return await handler(request)
            except LoginRequired:
                return JSONResponse(Unauthenticated("log in again").to_dict(), status_code=401)

        return json_handler
