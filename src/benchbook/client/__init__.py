"""The Python client of a Benchbook server (issue 16): ``Client`` (sync) and ``AsyncClient``.

    from benchbook.client import Client
    with Client() as bb:                      # BENCHBOOK_URL, BENCHBOOK_API_KEY
        for case in bb.cases("gsm8k@1.0.0"):  # the streamed JSONL export, flat memory
            ...

Answers are the server's pydantic contracts (``benchbook.contracts``); errors the same
``BenchbookError`` subclasses with ``code`` and ``details``. Importing this package loads httpx,
pydantic and tenacity only (no SQLAlchemy, no FastAPI); the adapters :func:`to_inspect_dataset`
and :func:`to_hf_dataset` import their frameworks on first call.
"""

from __future__ import annotations

from typing import Any

from benchbook.client.aio import AsyncClient
from benchbook.client.sync import Client
from benchbook.errors import (
    BenchbookError,
    Conflict,
    Forbidden,
    InvalidInput,
    NotFound,
    Unauthenticated,
    Unavailable,
)


def to_inspect_dataset(ref: str, client: Client | None = None, name: str | None = None) -> Any:
    """An Inspect AI ``MemoryDataset`` of ``ref`` (see :mod:`benchbook.client.adapters`)."""
    from benchbook.client.adapters import to_inspect_dataset as adapt

    return adapt(ref, client, name)


def to_hf_dataset(ref: str, client: Client | None = None) -> Any:
    """A Hugging Face ``datasets.Dataset`` of ``ref`` (see :mod:`benchbook.client.adapters`)."""
    from benchbook.client.adapters import to_hf_dataset as adapt

    return adapt(ref, client)


__all__ = [
    "AsyncClient",
    "BenchbookError",
    "Client",
    "Conflict",
    "Forbidden",
    "InvalidInput",
    "NotFound",
    "Unauthenticated",
    "Unavailable",
    "to_hf_dataset",
    "to_inspect_dataset",
]
