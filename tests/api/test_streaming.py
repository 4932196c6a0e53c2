"""``api.streaming.read_ahead``: a blocking iterator read in its own thread, a bounded number
of items ahead of the consumer, closed in that thread however the consumer stops."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest

from benchbook.api.streaming import read_ahead


class Source:
    """Yields ``n`` items, counting how many were made and in which thread it was closed."""

    def __init__(self, n: int, fail_at: int | None = None) -> None:
        self.made = 0
        self.closed_in: str | None = None
        self.closed = threading.Event()
        self._items = self._run(n, fail_at)

    def _run(self, n: int, fail_at: int | None) -> Iterator[bytes]:
        try:
            for i in range(n):
                if i == fail_at:
                    raise ValueError(f"row {i} is broken")
                self.made += 1
                yield b"%d\n" % i
        finally:
            self.closed_in = threading.current_thread().name
            self.closed.set()

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        return next(self._items)

    def close(self) -> None:
        self._items.close()


async def _collect(source: Source, depth: int = 4) -> list[bytes]:
    return [item async for item in read_ahead(source, depth)]


def test_every_item_arrives_in_order_and_the_source_is_closed_in_its_thread() -> None:
    source = Source(100)
    assert asyncio.run(_collect(source)) == [b"%d\n" % i for i in range(100)]
    assert source.closed.wait(5)
    assert source.closed_in == "bb-read-ahead"


def test_an_error_of_the_source_is_raised_after_the_items_before_it() -> None:
    source = Source(10, fail_at=6)
    got: list[bytes] = []

    async def run() -> None:
        async for item in read_ahead(source):
            got.append(item)

    with pytest.raises(ValueError, match="row 6 is broken"):
        asyncio.run(run())
    assert got == [b"%d\n" % i for i in range(6)]
    assert source.closed.wait(5)


def test_the_thread_stays_within_depth_and_stops_when_the_consumer_does() -> None:
    source = Source(1000)

    async def run() -> None:
        stream = read_ahead(source, depth=3)
        assert await anext(stream) == b"0\n"
        await asyncio.sleep(0.3)  # time enough to run far ahead, were it unbounded
        assert source.made <= 1 + 3 + 1  # taken, queued, being made
        await stream.aclose()

    asyncio.run(run())
    assert source.closed.wait(5), "the source was not closed after the consumer stopped"
    assert source.closed_in == "bb-read-ahead"
    assert source.made < 10


def test_a_cancelled_consumer_stops_the_thread() -> None:
    source = Source(10**6)

    async def run() -> None:
        async def consume() -> None:
            async for _ in read_ahead(source, depth=2):
                await asyncio.sleep(10)  # a client that stopped reading

        task = asyncio.create_task(consume())
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(run())
    assert source.closed.wait(5)
    assert source.made < 10


def test_depth_below_one_is_refused() -> None:
    async def run() -> None:
        await anext(read_ahead(Source(1), depth=0))

    with pytest.raises(ValueError, match="depth must be at least 1, got 0"):
        asyncio.run(run())
