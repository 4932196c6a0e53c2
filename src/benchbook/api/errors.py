"""One translation of errors into the HTTP envelope ``{code, message, details}``.

- ``BenchbookError`` → its ``http_status`` (400/401/403/404/409/413/429/502/503) and
  ``to_dict()``; a 429 and a 503 (the SQLite writer stayed busy) also carry ``Retry-After``
  (seconds).
- FastAPI's ``RequestValidationError`` (query, path or body shape) → 400 ``invalid_input`` with
  ``details.errors = [{path, message}]``; paths are dotted, e.g. ``query.limit``.
- Starlette HTTP errors (unknown route 404, wrong method 405) → the same envelope, keeping
  their headers (a 405's ``Allow``).
- Anything else → 500 ``internal_error`` without internals (logged server-side).
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from benchbook.errors import BenchbookError, TooManyRequests, Unavailable
from benchbook.transports.methods import allowed_methods

log = logging.getLogger("benchbook.api")

#: Codes for the HTTP statuses Starlette itself raises (routing, methods).
HTTP_CODES = {
    400: "invalid_input",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    429: "too_many_requests",
    503: "unavailable",
}


class ErrorBody(BaseModel):
    """The error envelope every non-2xx answer carries."""

    code: str
    message: str
    details: dict[str, Any] = Field(default_factory=dict)


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` entries documenting the envelope for ``statuses``."""
    return {s: {"model": ErrorBody, "description": HTTP_CODES.get(s, "error")} for s in statuses}


def envelope(status: int, code: str, message: str, details: dict[str, Any] | None = None) -> Any:
    """A ``JSONResponse`` carrying ``{code, message, details}``."""
    return JSONResponse(
        {"code": code, "message": message, "details": details or {}}, status_code=status
    )


def validation_issues(exc: RequestValidationError) -> list[dict[str, str]]:
    """``[{path, message}]`` from FastAPI's request validation errors."""
    issues = []
    for err in exc.errors():
        path = ".".join(str(p) for p in err.get("loc", ())) or "(request)"
        message = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        issues.append({"path": path, "message": message})
    return issues


async def _benchbook_error(_request: Request, exc: Exception) -> Any:
    assert isinstance(exc, BenchbookError)
    response = envelope(exc.http_status, exc.code, exc.message, exc.details)
    if isinstance(exc, TooManyRequests | Unavailable):
        response.headers["Retry-After"] = str(exc.retry_after_s)
    return response


async def _request_invalid(_request: Request, exc: Exception) -> Any:
    assert isinstance(exc, RequestValidationError)
    issues = validation_issues(exc)
    first = issues[0] if issues else {"path": "(request)", "message": "invalid request"}
    more = f" (and {len(issues) - 1} more)" if len(issues) > 1 else ""
    return envelope(
        400,
        "invalid_input",
        f"invalid request: {first['path']}: {first['message']}{more}",
        {"errors": issues},
    )


async def _http_error(request: Request, exc: Exception) -> Any:
    assert isinstance(exc, StarletteHTTPException)
    code = HTTP_CODES.get(exc.status_code, "error")
    message = str(exc.detail)
    if exc.status_code == 404 and message == "Not Found":
        message = f"no route for {request.method} {request.url.path}"
    response = envelope(exc.status_code, code, message)
    response.headers.update(exc.headers or {})
    if exc.status_code == 405:
        response.headers["Allow"] = allowed_methods(request)
    return response


async def _unexpected(request: Request, exc: Exception) -> Any:
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return envelope(500, "internal_error", "internal server error; see the server log")


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers above on ``app`` (once, in ``create_app``)."""
    app.add_exception_handler(BenchbookError, _benchbook_error)
    app.add_exception_handler(RequestValidationError, _request_invalid)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
