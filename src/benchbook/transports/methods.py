"""The ``Allow`` header of a 405 (RFC 9110 §15.5.6), for the API's and the dashboard's error
answers: Starlette names only the first route whose path matched, while a path is often served
by several routes (``GET`` and ``POST /api/datasets``)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.routing import Match

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


def allowed_methods(request: Request) -> str:
    """Every method some route of the app serves at this request's path, e.g. ``GET, HEAD,
    POST`` (asked of each route as if the request had used that method).

    A path listed in ``app.state.literal_methods`` (``{path: "POST"}``, set by the API for
    literal paths that a parameterized sibling would also match) allows exactly those."""
    fixed = getattr(request.app.state, "literal_methods", {}).get(request.url.path)
    if fixed is not None:
        return str(fixed)
    allowed = []
    for method in METHODS:
        scope = {**request.scope, "method": method}
        if any(route.matches(scope)[0] is Match.FULL for route in request.app.routes):
            allowed.append(method)
    return ", ".join(allowed)


def _segments(template: str) -> list[str]:
    return template.strip("/").split("/")


def _param(segment: str) -> str | None:
    """``name`` for a whole-segment parameter ``{name}`` or ``{name:convertor}``, else None."""
    if segment.startswith("{") and segment.endswith("}"):
        return segment[1:-1].split(":", 1)[0]
    return None


def literal_siblings(templates: list[str]) -> dict[tuple[str, str], list[str]]:
    """``{(template, param): [literal, …]}``: the literal segments that another template spells
    where ``template`` has the parameter ``param``, the rest of both paths alike.

    ``/api/benchmarks/import`` is a sibling of ``/api/benchmarks/{benchmark}``: the literal
    names its own resource, so ``import`` is never a value of ``benchmark``.
    """
    found: dict[tuple[str, str], list[str]] = {}
    for template in templates:
        segs = _segments(template)
        for other in templates:
            others = _segments(other)
            if other == template or len(others) != len(segs):
                continue
            differ = [i for i, (a, b) in enumerate(zip(segs, others, strict=True)) if a != b]
            if len(differ) != 1:
                continue
            i = differ[0]
            name = _param(segs[i])
            if name is not None and _param(others[i]) is None:
                literals = found.setdefault((template, name), [])
                if others[i] not in literals:
                    literals.append(others[i])
    return found
