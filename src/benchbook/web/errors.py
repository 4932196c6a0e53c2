"""Errors on pages: the one place a ``BenchbookError`` becomes an HTML error page.

Page routers use :class:`PageRoute`: a ``LoginRequired`` becomes a 303 to ``/login``, and a
``BenchbookError`` an error page with the error's HTTP status (403, 404, 409 …) and message.
The dashboard's small JSON endpoints use :class:`JsonRoute`: ``LoginRequired`` becomes the API's
401 envelope, and other errors reach the API's handlers (``api/errors.py``) unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.responses import RedirectResponse
from fastapi.routing import APIRoute

from benchbook.api.errors import envelope
from benchbook.errors import BenchbookError
from benchbook.web.render import render
from benchbook.web.session import LoginRequired, Page, login_url, page_caller

Handler = Callable[[Request], Coroutine[Any, Any, Response]]

TITLES = {
    400: "That did not work",
    401: "Please log in",
    403: "Not allowed",
    404: "Not found",
    409: "Conflict",
    413: "Too large",
    502: "Upstream problem",
}


def _viewer(request: Request) -> Page | None:
    """The caller for the layout of an error page, if there is one."""
    try:
        return page_caller(request) if request.method == "GET" else None
    except (BenchbookError, LoginRequired):
        return None


def error_page(request: Request, status: int, message: str, details: Any = None) -> Response:
    """An error page with ``status``: a title for the status and the error's message."""
    errors = details.get("errors") if isinstance(details, dict) else None
    return render(
        request,
        _viewer(request),
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
                return error_page(request, exc.http_status, exc.message, exc.details)

        return page_handler


class JsonRoute(APIRoute):
    """A JSON route of the dashboard's scripts: 401 envelope instead of a login redirect."""

    def get_route_handler(self) -> Handler:
        handler = super().get_route_handler()

        async def json_handler(request: Request) -> Response:
            try:
                return await handler(request)
            except LoginRequired:
                return envelope(401, "unauthenticated", "log in again")  # type: ignore[no-any-return]

        return json_handler
