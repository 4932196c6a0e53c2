"""Streaming responses fed by a blocking iterator read ahead in its own thread.

Starlette runs a plain iterator's every ``next()`` on its thread pool, one hop per chunk, and the
socket waits while a chunk is made (e.g. while the database reads the next batch). Here one
thread runs the whole iterator a few chunks ahead of the socket: the next batch's read overlaps
the current chunk's send, and memory stays bounded by ``depth`` chunks.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

#: Chunks the producer thread may run ahead of the socket.
READ_AHEAD = 4


async def read_ahead(source: Iterator[bytes], depth: int = READ_AHEAD) -> AsyncIterator[bytes]:
    """Yield the items of ``source`` (e.g. ~256 KiB JSONL chunks) in order, produced by a
    dedicated thread at most ``depth`` items (≥ 1) ahead of this consumer.

    The thread calls ``source.close()`` (when it has one) once the source ends, raises, or this
    generator stops early (closed, cancelled, the client gone: the thread notices within 0.5 s
    and drops what it made), so a database cursor behind the source is released in the thread
    that used it. An exception raised by ``source`` is raised here, after the items before it.
    """
    if depth < 1:
        raise ValueError(f"depth must be at least 1, got {depth}")
    loop = asyncio.get_running_loop()
    ready: asyncio.Queue[tuple[bool, Any]] = asyncio.Queue()
    room = threading.Semaphore(depth)
    stop = threading.Event()

    def hand_over(more: bool, item: Any) -> None:
        try:
            loop.call_soon_threadsafe(ready.put_nowait, (more, item))
        except RuntimeError:  # the event loop is closed: nobody is listening any more
            stop.set()

    def produce() -> None:
        try:
            while True:
                while not room.acquire(timeout=0.5):
                    if stop.is_set():
                        return
                if stop.is_set():
                    return
                try:
                    item = next(source)
                except StopIteration:
                    hand_over(False, None)
                    return
                hand_over(True, item)
        except BaseException as exc:  # handed to the consumer, raised there
            hand_over(False, exc)
        finally:
            close = getattr(source, "close", None)
            if close is not None:
                close()

    threading.Thread(target=produce, name="bb-read-ahead", daemon=True).start()
    try:
        while True:
            more, item = await ready.get()
            if not more:
                if item is not None:
                    raise item
                return
            room.release()
            yield item
    finally:
        stop.set()
        room.release()  # wakes a producer waiting for room
