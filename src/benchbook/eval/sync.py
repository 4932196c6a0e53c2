"""Run a coroutine to completion from synchronous code, whether or not the calling thread
already runs an event loop (a Jupyter notebook, an async web handler calling a sync service,
Playwright's sync API in the same process)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on a fresh event loop and return its result (or raise its exception).

    ``asyncio.run`` refuses to start when the calling thread already runs a loop
    ("asyncio.run() cannot be called from a running event loop"); in that case the coroutine
    runs on a fresh loop in a helper thread and this call blocks until it finishes.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = asyncio.run(coro)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, name="benchbook-run-sync")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    result: T = box["result"]
    return result
