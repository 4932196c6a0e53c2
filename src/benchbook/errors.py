"""The error hierarchy raised below the transports.

Transports translate these once (``api/errors.py``, ``mcp/errors.py``, ``web/errors.py``).
Each error has a stable ``code`` and a ``details`` mapping with JSON-serializable values.
"""

from __future__ import annotations

from typing import Any, ClassVar


class BenchbookError(Exception):
    """Base class. ``code`` is stable; ``message`` is for people; ``details`` for programs."""

    code: ClassVar[str] = "error"
    http_status: ClassVar[int] = 500

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] = details or {}

    def to_dict(self) -> dict[str, Any]:
        """The wire envelope ``{code, message, details}``."""
        return {"code": self.code, "message": self.message, "details": self.details}


class InvalidInput(BenchbookError):
    """The request or its data is malformed; ``details.errors`` lists ``{path, message}``."""

    code = "invalid_input"
    http_status = 400


class PayloadTooLarge(BenchbookError):
    """The request body exceeds the configured limit."""

    code = "payload_too_large"
    http_status = 413


class Unauthenticated(BenchbookError):
    """No valid credentials were presented."""

    code = "unauthenticated"
    http_status = 401


class TooManyRequests(BenchbookError):
    """Too many attempts (failed logins); ``details.retry_after_s`` says when to try again."""

    code = "too_many_requests"
    http_status = 429

    @property
    def retry_after_s(self) -> int:
        """Whole seconds to wait (the HTTP ``Retry-After`` value)."""
        return int(self.details.get("retry_after_s", 1))


class Unavailable(BenchbookError):
    """The server cannot take this write now (SQLite's single writer is held, e.g. by a long
    import); ``details.retry_after_s`` says when to try again. Nothing was written."""

    code = "unavailable"
    http_status = 503

    @property
    def retry_after_s(self) -> int:
        """Whole seconds to wait (the HTTP ``Retry-After`` value)."""
        return int(self.details.get("retry_after_s", 1))


class Forbidden(BenchbookError):
    """The principal may not perform the action."""

    code = "forbidden"
    http_status = 403


class NotFound(BenchbookError):
    """The resource does not exist or is not visible to the principal."""

    code = "not_found"
    http_status = 404


class Conflict(BenchbookError):
    """The write contradicts stored, immutable content."""

    code = "conflict"
    http_status = 409


class ContentConflict(Conflict, InvalidInput):
    """A well-formed import whose source content does not fit its recipe: rows of inline
    ``text`` or an uploaded file that do not parse or map (named by row), a source with no rows,
    a catalog entry or recipe that reads a file none was sent for. No JSON Schema can state what
    a file holds, so HTTP answers 409 ``conflict`` (the request contradicts itself or what is
    stored); it is an InvalidInput too, so Python callers catching bad input still catch it."""

    code = "conflict"
    http_status = 409


class UpstreamError(BenchbookError):
    """A remote source (Hugging Face, a model endpoint) failed or refused."""

    code = "upstream_error"
    http_status = 502


class Cancelled(BenchbookError):
    """A job was cancelled by its owner; nothing was stored."""

    code = "cancelled"
    http_status = 409
