"""The ``Allow`` header of a 405 (RFC 9110 §15.5.6), for the API's and the dashboard's error
answers: Starlette names only the first route whose path matched, while a path is often served
by several routes (``GET`` and ``POST /api/datasets``)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.routing import Match

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


def allowed_methods(request: Request) -> str:
    """Every method some route of the app serves at this request's path, e.g. ``GET, HEAD,
    POST`` (asked of each route as if the request had used that method)."""
    allowed = []
    for method in METHODS:
        scope = {**request.scope, "method": method}
        if any(route.matches(scope)[0] is Match.FULL for route in request.app.routes):
            allowed.append(method)
    return ", ".join(allowed)
