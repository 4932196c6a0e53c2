"""pytest fixtures for the fake Hugging Face server (loaded from ``tests/conftest.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .catalog import defaults
from .server import HfServer


@pytest.fixture
def hf_server(shared_data: Path) -> Iterator[HfServer]:
    """A fresh server on a free 127.0.0.1 port serving ``catalog.defaults``.

    ``hf_server.url`` is the Hub base URL, ``hf_server.viewer_url`` the viewer's;
    ``hf_server.add(FakeDataset(...))`` serves more, ``hf_server.requests`` logs every call.
    """
    server = HfServer()
    for dataset in defaults(shared_data):
        server.add(dataset)
    with server:
        yield server
