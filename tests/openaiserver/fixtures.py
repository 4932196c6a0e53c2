"""pytest fixtures for the local OpenAI-compatible server (loaded from ``tests/conftest.py``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .server import OpenAIServer


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    """A fresh server on a free 127.0.0.1 port for one test.

    ``openai_server.url`` is the API root (``http://127.0.0.1:<port>/v1``).

    - replies: ``openai_server.reply = lambda body: "text"`` (or a dict, sent as JSON), or
      ``openai_server.set_rules([(r"regex on the last user message", reply), ...], default=...)``;
    - failures: ``openai_server.fail_next(2, status=429, retry_after_s=0)`` /
      ``fail_next(n, status=500)``; ``reject_response_format = True`` answers 400 to any
      request carrying ``response_format``; ``delay_s`` slows every completion;
    - records: ``openai_server.requests`` (request bodies, failed ones included),
      ``request_headers``, ``call_count``; ``reset()`` forgets them.
    """
    with OpenAIServer() as server:
        yield server
