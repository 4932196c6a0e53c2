"""``Client.cases`` reads the JSONL export of a real ``benchbook serve`` (both backends, the
package's ``live`` server) through a TCP proxy that cuts the export's connections part-way:
the client resumes after the last whole case, with neither duplicates nor gaps, and gives up
with ``Unavailable`` when the stream keeps dropping without a new case. ``CaseLines`` alone: lines
split across chunks at every byte, and a bad line named by pydantic as ``Case.model_validate_json``
names it, after the cases before it were handed out."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from urllib.parse import urlsplit

import orjson
import pytest
from pydantic import ValidationError

from benchbook.client import AsyncClient, Client, Unavailable
from benchbook.client._stream import CaseLines
from benchbook.contracts import Case
from benchbook.errors import BenchbookError
from tests.client.conftest import Live, case

N_CASES = 3000


class CuttingProxy:
    """Forwards TCP connections to ``upstream``; the n-th connection that asks for a
    ``cases.jsonl`` export is closed after ``cuts[n]`` bytes of its answer (headers included),
    once ``cuts`` runs out answers pass whole. ``requests`` keeps each request line seen."""

    def __init__(self, upstream: tuple[str, int], cuts: list[int]) -> None:
        self.upstream = upstream
        self.cuts = list(cuts)
        self.requests: list[str] = []
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                down, _ = self.listener.accept()
            except OSError:
                return
            up = socket.create_connection(self.upstream)
            state: dict[str, int | None] = {"cut": None, "sent": 0}
            threading.Thread(target=self._requests, args=(down, up, state), daemon=True).start()
            threading.Thread(target=self._answers, args=(up, down, state), daemon=True).start()

    def _requests(
        self, down: socket.socket, up: socket.socket, state: dict[str, int | None]
    ) -> None:
        while data := _recv(down):
            line = data.split(b"\r\n", 1)[0].decode(errors="replace")
            if line.startswith("GET "):
                with self.lock:
                    self.requests.append(line)
                    if "cases.jsonl" in line and self.cuts:
                        state["cut"], state["sent"] = self.cuts.pop(0), 0
            if not _send(up, data):
                break
        _close(down, up)

    def _answers(
        self, up: socket.socket, down: socket.socket, state: dict[str, int | None]
    ) -> None:
        while data := _recv(up):
            cut, sent = state["cut"], state["sent"] or 0
            if cut is not None and sent + len(data) >= cut:
                _send(down, data[: cut - sent])
                break
            state["sent"] = sent + len(data)
            if not _send(down, data):
                break
        _close(down, up)

    def close(self) -> None:
        self.listener.close()


def _recv(sock: socket.socket) -> bytes:
    try:
        return sock.recv(65536)
    except OSError:
        return b""


def _send(sock: socket.socket, data: bytes) -> bool:
    try:
        sock.sendall(data)
        return True
    except OSError:
        return False


def _close(*socks: socket.socket) -> None:
    for sock in socks:
        with suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        sock.close()


@contextmanager
def proxied(live: Live, cuts: list[int]) -> Iterator[CuttingProxy]:
    parts = urlsplit(live.url)
    proxy = CuttingProxy((parts.hostname or "127.0.0.1", parts.port or 80), cuts)
    try:
        yield proxy
    finally:
        proxy.close()


@pytest.fixture(scope="module")
def many(live: Live) -> list[str]:
    """``many@1.0.0``: 3,000 cases (~110 bytes a line, ~330 KB of export)."""
    ids = [f"q{i:05d}" for i in range(N_CASES)]
    cases = [case(cid, f"what is {i} + {i}?", 2 * i) for i, cid in enumerate(ids)]
    with live.client() as client:
        client.datasets.register({"id": "many", "version": "1.0.0", "cases": cases})
    return ids


def test_a_dropped_case_stream_resumes_without_duplicates_or_gaps(
    live: Live, many: list[str]
) -> None:
    # cut inside the headers, inside a line after ~100 KB, and after one more byte of a resume
    with proxied(live, [40, 100_003, 57_777, 301]) as proxy:
        with Client(f"http://127.0.0.1:{proxy.port}", live.admin_key) as client:
            got = [c.id for c in client.cases("many")]
        exports = [r for r in proxy.requests if "cases.jsonl" in r]
    assert got == many
    assert len(exports) == 5, exports  # four cut streams, then the whole rest
    assert "after=" not in exports[0] and "after=" in exports[-1]
    resumed = [int(r.split("after=")[1].split()[0].split("&")[0]) for r in exports[2:]]
    assert resumed == sorted(resumed) and 0 < resumed[0] < N_CASES - 1


def test_the_async_client_resumes_a_dropped_stream_too(live: Live, many: list[str]) -> None:
    async def read(port: int) -> list[str]:
        async with AsyncClient(f"http://127.0.0.1:{port}", live.admin_key) as client:
            return [c.id async for c in client.cases("many@1.0.0")]

    with proxied(live, [150_001, 90_000]) as proxy:
        assert asyncio.run(read(proxy.port)) == many
        assert sum("cases.jsonl" in r for r in proxy.requests) == 3


def test_a_stream_that_keeps_dropping_without_a_new_case_is_unavailable(
    live: Live, many: list[str]
) -> None:
    seen = []
    with (
        proxied(live, [100_000] + [60] * 10) as proxy,
        Client(f"http://127.0.0.1:{proxy.port}", live.admin_key, retries=3) as client,
        pytest.raises(Unavailable, match="without progress"),
    ):
        for c in client.cases("many"):
            seen.append(c.id)
    assert seen == many[: len(seen)] and 0 < len(seen) < N_CASES


def _lines(n: int) -> list[bytes]:
    return [orjson.dumps(case(f"c{i}", f"what is {i} + {i}?", 2 * i)) for i in range(n)]


def test_a_line_split_across_chunks_at_any_byte_gives_the_same_cases() -> None:
    lines = _lines(3)
    body = b"\n".join(lines) + b"\n"
    want = [Case.model_validate_json(line) for line in lines]
    for cut in range(1, len(body)):
        reader = CaseLines(3)
        got = [*reader.feed(body[:cut]), *reader.feed(body[cut:])]
        assert got == want, cut
        assert reader.received == 3 and reader.done()


def test_a_bad_line_inside_a_chunk_fails_as_case_validation_after_the_cases_before_it() -> None:
    lines = _lines(5)
    bad = orjson.dumps({**orjson.loads(lines[2]), "timeout_s": 0, "extra": 1})
    lines[2] = bad
    reader = CaseLines(5)
    got: list[str] = []
    with pytest.raises(ValidationError) as err:
        for c in reader.feed(b"\n".join(lines) + b"\n"):
            got.append(c.id)
    with pytest.raises(ValidationError) as alone:
        Case.model_validate_json(bad)
    assert got == ["c0", "c1"] and reader.received == 2
    assert err.value.title == alone.value.title == "Case"
    assert err.value.errors() == alone.value.errors()
    assert {e["loc"] for e in err.value.errors()} == {("timeout_s",), ("extra",)}


def test_more_lines_than_the_version_holds_is_an_error_before_any_is_validated() -> None:
    reader = CaseLines(2)
    with pytest.raises(BenchbookError, match="more than the version's 2 cases"):
        list(reader.feed(b"\n".join(_lines(3)) + b"\n"))
    assert reader.received == 0


def test_a_stream_that_ends_inside_a_line_is_an_error() -> None:
    reader = CaseLines(1)
    assert list(reader.feed(_lines(1)[0] + b"\n" + b'{"id": "c1"')) != []
    with pytest.raises(BenchbookError, match="ended inside a line"):
        reader.done()
