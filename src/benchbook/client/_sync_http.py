"""What every namespace of :class:`~benchbook.client.sync.Client` sends its calls through.

:class:`SyncHTTP` holds the httpx client and the attempts per request, and sends one
:mod:`benchbook.client._ops` call with the retry policy. ``Client`` is one; the namespaces
(``client.datasets``, ``client.imports``, ``client.runs``) take it, so they can live in their own
modules without importing ``Client`` (issue 32).
"""

from __future__ import annotations

from typing import Any, TypeVar

import httpx
from tenacity import Retrying

from benchbook.client._calls import Call, check, error_of, retry_policy
from benchbook.client._calls import translate_final as _final

T = TypeVar("T")


class SyncHTTP:
    """A Benchbook server's HTTP session, synchronous.

    Attributes:
        http: the httpx client (base URL and headers set).
        attempts: attempts per request on connection errors and 502/503 (≥ 1).
    """

    http: httpx.Client
    attempts: int

    def call(self, call: Call[T]) -> T:
        """Send one call with the retry policy; its parsed answer.

        Raises:
            BenchbookError: the subclass the answer's ``code`` names (``Unavailable`` when the
                server stayed unreachable or busy through every attempt).
        """
        return call.parse(self._send(call, stream=False))

    def _send(self, call: Call[Any], stream: bool) -> httpx.Response:
        try:
            for attempt in Retrying(**retry_policy(self.attempts)):
                with attempt:
                    response = self.http.send(call.request(self.http), stream=stream)
                    if stream and not response.is_success:
                        response.read()
                        response.close()
                    response = check(response)
        except Exception as exc:
            final = _final(exc)
            if final is exc:
                raise
            raise final from exc
        if not response.is_success:
            raise error_of(response)
        return response
