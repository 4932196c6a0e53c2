"""What every client operation sends and how its answer is read, shared by the sync and async
clients: one :class:`Call` per HTTP request, the error translation and the retry policy.

Errors: a non-2xx answer carrying the API envelope ``{code, message, details}`` is raised as the
:class:`~benchbook.errors.BenchbookError` subclass with that ``code`` (``not_found`` →
``NotFound``, …) and its ``details``; an answer without the envelope (a proxy's HTML page) is
mapped by status. Retries (tenacity): connection errors (the request never reached the server)
and 502/503 answers, with exponential backoff (0.5 s doubling, capped at 8 s, or the answer's
``Retry-After`` when larger, capped at 30 s), at most :data:`ATTEMPTS` attempts; a 4xx is never
retried.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx
from pydantic import TypeAdapter
from tenacity import (
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
)

from benchbook import errors

T = TypeVar("T")

DEFAULT_URL = "http://127.0.0.1:8000"
ATTEMPTS = 5
RETRY_STATUSES = frozenset({502, 503})
MAX_RETRY_AFTER_S = 30.0

_BY_CODE: dict[str, type[errors.BenchbookError]] = {}
_BY_STATUS: dict[int, type[errors.BenchbookError]] = {}


def _collect(cls: type[errors.BenchbookError]) -> None:
    # Only the public classes of benchbook.errors: a private subclass elsewhere (the MCP
    # server's ``internal_error``), imported before the client, must not change the mapping.
    for sub in cls.__subclasses__():
        if sub.__module__ == errors.__name__:
            _BY_CODE.setdefault(sub.code, sub)
            _BY_STATUS.setdefault(sub.http_status, sub)
        _collect(sub)


_collect(errors.BenchbookError)
_BY_STATUS[409] = errors.Conflict  # Cancelled shares 409; without a code it is a conflict
_BY_CODE["conflict"] = errors.Conflict  # not ContentConflict (also an InvalidInput) found first


class RetryableStatus(Exception):
    """A 502/503 answer, raised inside the retry loop only (the last one is translated)."""

    def __init__(self, response: httpx.Response) -> None:
        super().__init__(f"HTTP {response.status_code}")
        self.response = response


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request: method, path under the base URL, query, JSON body or raw content, and
    how a 2xx answer becomes a value (``parse``)."""

    method: str
    path: str
    parse: Callable[[httpx.Response], T]
    params: dict[str, Any] = field(default_factory=dict)
    json: Any = None
    content: bytes | None = None
    #: A multipart body: text parts and ``(name, (file name, bytes))`` file parts.
    data: dict[str, str] | None = None
    files: list[tuple[str, tuple[str, bytes]]] | None = None

    def request(self, client: httpx.Client | httpx.AsyncClient) -> httpx.Request:
        params = {k: v for k, v in self.params.items() if v is not None}
        if self.files is not None:
            return client.build_request(
                self.method, self.path, params=params, data=self.data, files=self.files
            )
        headers = {"content-type": "application/json"} if self.content is not None else None
        return client.build_request(
            self.method,
            self.path,
            params=params,
            json=self.json,
            content=self.content,
            headers=headers,
        )


def model(adapter_type: Any) -> Callable[[httpx.Response], Any]:
    """A ``parse`` that validates the answer body as ``adapter_type`` (a model or a type)."""
    adapter: TypeAdapter[Any] = TypeAdapter(adapter_type)
    return lambda response: adapter.validate_json(response.content)


def seg(text: str) -> str:
    """One URL path segment (ids and refs are quoted; ``/`` inside a case id is kept)."""
    return quote(text, safe="")


def split_ref(ref: str) -> tuple[str, str]:
    """``"gsm8k@1.0.0"`` → ``("gsm8k", "1.0.0")``; a bare id means ``latest``.

    Raises:
        InvalidInput: an empty id or version (``"@1.0"``, ``"gsm8k@"``).
    """
    dataset_id, sep, version = ref.partition("@")
    if not dataset_id or (sep and not version):
        raise errors.InvalidInput(
            f"a dataset ref is 'id' or 'id@version', got {ref!r}", {"ref": ref}
        )
    return dataset_id, version or "latest"


def error_of(response: httpx.Response) -> errors.BenchbookError:
    """The BenchbookError a non-2xx answer stands for (see the module docstring)."""
    status = response.status_code
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("code"), str):
        raw = body.get("details")
        details: dict[str, Any] = raw if isinstance(raw, dict) else {}
        return error_of_envelope(body["code"], str(body.get("message", "")), details, status)
    text = response.text[:300] if response.content else ""
    message = f"HTTP {status} from {response.request.method} {response.request.url.path}: {text}"
    cls = _BY_STATUS.get(status, errors.BenchbookError)
    return cls(message.strip(), {"status": status})


def error_of_envelope(
    code: str, message: str, details: dict[str, Any], status: int | None = None
) -> errors.BenchbookError:
    """The BenchbookError subclass of an envelope's ``code``; an unknown code (``internal_error``)
    gives the base class with ``details.code`` (and ``details.status``) set."""
    cls = _BY_CODE.get(code)
    if cls is not None:
        return cls(message, details)
    extra = {"code": code} if status is None else {"code": code, "status": status}
    return errors.BenchbookError(message, {**details, **extra})


def check(response: httpx.Response) -> httpx.Response:
    """``response`` unless it is a 502/503, which raises :class:`RetryableStatus` (inside the
    retry loop); any other non-2xx is returned and raised after the loop by :func:`error_of`."""
    if response.status_code in RETRY_STATUSES:
        raise RetryableStatus(response)
    return response


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, RetryableStatus | httpx.ConnectError | httpx.ConnectTimeout)


_backoff = wait_exponential(multiplier=0.5, max=8.0)


def _wait(state: RetryCallState) -> float:
    base = _backoff(state)
    exc = state.outcome.exception() if state.outcome else None
    if isinstance(exc, RetryableStatus):
        try:
            after = float(exc.response.headers.get("retry-after", "0"))
        except ValueError:
            after = 0.0
        return max(base, min(after, MAX_RETRY_AFTER_S))
    return base


def retry_policy(attempts: int) -> dict[str, Any]:
    """Keyword arguments of tenacity's ``Retrying``/``AsyncRetrying`` for ``attempts`` tries."""
    return {
        "retry": retry_if_exception(_retryable),
        "stop": stop_after_attempt(max(1, attempts)),
        "wait": _wait,
        "reraise": True,
    }


def translate_final(exc: BaseException) -> BaseException:
    """After the last attempt: a 502/503 becomes its BenchbookError, a connection error an
    ``Unavailable`` naming the URL; anything else is unchanged."""
    if isinstance(exc, RetryableStatus):
        return error_of(exc.response)
    if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
        url = str(exc.request.url) if exc._request is not None else "the server"
        return errors.Unavailable(f"cannot reach {url}: {exc}", {"url": url})
    return exc


def settings(url: str | None, api_key: str | None) -> tuple[str, dict[str, str]]:
    """The base URL and headers: arguments first, then ``BENCHBOOK_URL`` /
    ``BENCHBOOK_API_KEY``, then ``http://127.0.0.1:8000`` and no key."""
    base = (url or os.environ.get("BENCHBOOK_URL") or DEFAULT_URL).rstrip("/")
    key = api_key or os.environ.get("BENCHBOOK_API_KEY")
    headers = {"accept": "application/json", "user-agent": "benchbook-client"}
    if key:
        headers["authorization"] = f"Bearer {key}"
    return base, headers
