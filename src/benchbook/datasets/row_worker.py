"""Building case rows in a second process while the first one writes them (issue 15, item 2).

:class:`CaseRowWorker` forks a child that reads a local file source, builds, canonicalizes and
hashes its rows with :func:`~benchbook.datasets.mapping.case_rows` (the very code of the one-process
path) and sends them over a pipe in chunks of :data:`CHUNK_ROWS`; the parent stores one chunk
while the child builds the next, so a 2-core machine parses and writes at the same time. What
the one-process path reports is replayed in the parent at the same positions of the stream:

- progress: the child records ``on_row(rows_read, cases_built)`` at every 100th row read and at
  the last row of a chunk, with the source's read fraction and total at that moment; the parent
  calls its own ``on_row`` with them just before yielding the row that followed, so reports,
  the 0.25 s rule and a cancelling callback (raising in the parent) behave as before;
- ``numbers`` (the source's number of each case, for duplicate-id errors) is filled in order;
- an error raised while building (bad rows with their lines, a malformed file, a line over its
  bound) is re-raised in the parent, where the caller's transaction rolls back as before.

The parent reads the pipe on a thread of its own into a queue bounded in bytes
(:data:`READ_AHEAD_BYTES`), so the child keeps building while the parent waits on its database
(a PostgreSQL batch is a few round trips of ~0.1–0.2 s; with only the pipe's 1 MiB between them
the child stopped ~2,000 rows ahead and each batch's rows were built after the previous batch
was written, not during it).
The child never touches the parent's database connection and leaves with ``os._exit``; the
parent kills and reaps it when the stream is abandoned (an error, a cancel, a rollback).
Forking is only done from a single-threaded process (a CLI import): a server's worker threads
may hold locks the child would need. :func:`worker_fits` says when the worker is used.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator, MutableSequence
from multiprocessing.connection import Connection, Pipe
from types import TracebackType
from typing import Any

from benchbook.contracts import SourceRef
from benchbook.datasets.mapping import CaseBuilder, CaseRow, case_rows
from benchbook.datasets.sources.files import FileSource

#: Rows per message (a multiple of 100), ~400 KB of gsm8k rows: with the pipe enlarged to
#: :data:`PIPE_BYTES` the child runs a few chunks ahead instead of handing each one over in
#: 64 KB pieces, every piece a wait for both processes to be on a core at once.
CHUNK_ROWS = 500
PIPE_BYTES = 1 << 20
#: Bytes of messages the parent's reading thread holds ahead of the rows it has consumed: ~16 MB,
#: ~30,000 gsm8k rows (three PostgreSQL batches), fewer of larger rows. One message is always
#: taken, however large (a chunk of 500 big rows), so memory stays bounded by this plus one chunk.
READ_AHEAD_BYTES = 16 << 20
#: Smaller files are built in-process: forking costs a few milliseconds.
WORKER_MIN_BYTES = 1 << 20
_MARK_EVERY = 100  # ImportCounter reports only at multiples of 100 rows read

#: (position in the chunk, rows_read, cases_built, read fraction, total)
_Mark = tuple[int, int, int, float | None, int | None]


def worker_fits(source: object) -> bool:
    """Whether :class:`CaseRowWorker` should build ``source``'s rows: a local :class:`FileSource`
    of at least :data:`WORKER_MIN_BYTES`, on a POSIX system with ``fork``, from a process with
    one thread and at least two usable CPUs."""
    if not isinstance(source, FileSource) or source.size_bytes < WORKER_MIN_BYTES:
        return False
    if not hasattr(os, "fork") or threading.active_count() != 1:
        return False
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) >= 2
    return (os.cpu_count() or 1) >= 2


class WorkerDied(RuntimeError):
    """The child building rows ended without saying why (killed, out of memory)."""


class CaseRowWorker:
    """Case rows of ``source`` built in a forked child; use as a context manager.

    Stands in for the source in progress reports: ``ref``, ``total``, ``notes`` and
    ``read_fraction()`` mirror the child's source as of the last row the parent consumed.
    """

    def __init__(self, source: FileSource, builder: CaseBuilder, limit: int | None) -> None:
        self.source, self.builder, self.limit = source, builder, limit
        self.ref: SourceRef = source.ref
        self.total: int | None = source.total
        self.notes: list[str] = []
        self._fraction: float | None = None
        self._pid: int | None = None
        self._reader: Connection | None = None
        self._inbox: deque[bytes | None] = deque()  # None: the child's end closed
        self._held = 0  # bytes in the inbox
        self._moved = threading.Condition()
        self._stop = False
        self._drainer: threading.Thread | None = None

    def read_fraction(self) -> float | None:
        """The source's share read (:meth:`FileSource.read_fraction`) at the last replayed row."""
        return self._fraction

    def __enter__(self) -> CaseRowWorker:
        reader, writer = Pipe(duplex=False)
        with contextlib.suppress(ImportError, AttributeError, OSError):  # Linux; else as is
            import fcntl

            fcntl.fcntl(writer.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        for stream in (sys.stdout, sys.stderr):  # the child must not repeat buffered output
            if stream is not None:
                stream.flush()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child (coverage is not collected there)
            code = 1
            try:
                reader.close()
                signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
                _build(self.source, self.builder, self.limit, writer)
                code = 0
            finally:
                os._exit(code)
        writer.close()
        self._pid, self._reader = pid, reader
        self._drainer = threading.Thread(target=self._drain, name="case-row-reader", daemon=True)
        self._drainer.start()
        return self

    def _drain(self) -> None:
        """The reading thread: every message of the pipe into the inbox (waiting while it holds
        :data:`READ_AHEAD_BYTES` and more), then None once the child's end is closed (it left, or
        died); stops early when the parent stops reading."""
        reader = self._reader
        assert reader is not None
        while True:
            message: bytes | None
            try:
                message = reader.recv_bytes()
            except (EOFError, OSError):
                message = None
            size = len(message) if message is not None else 0
            with self._moved:
                while self._inbox and self._held + size > READ_AHEAD_BYTES and not self._stop:
                    self._moved.wait()
                if self._stop:
                    return
                self._inbox.append(message)
                self._held += size
                self._moved.notify_all()
            if message is None:
                return

    def _next_message(self) -> bytes | None:
        """The oldest message the reading thread holds, waiting for one."""
        with self._moved:
            while not self._inbox:
                self._moved.wait()
            message = self._inbox.popleft()
            self._held -= len(message) if message is not None else 0
            self._moved.notify_all()
            return message

    def __exit__(
        self, _t: type[BaseException] | None, _e: BaseException | None, _tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop the child (SIGKILL unless it already left), reap it and end the reading thread
        (the child's end of the pipe closes with it); idempotent."""
        with self._moved:
            self._stop = True
            self._moved.notify_all()
        if self._pid is not None:
            pid, self._pid = self._pid, None
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done == 0:
                with contextlib.suppress(ProcessLookupError):  # it may have just left
                    os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
        if self._drainer is not None:
            self._drainer.join()
            self._drainer = None
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def rows(
        self,
        on_row: Callable[[int, int], None] | None = None,
        numbers: MutableSequence[int] | None = None,
    ) -> Iterator[CaseRow]:
        """The rows :func:`case_rows` yields for the source, with the same ``on_row`` calls at
        every 100th row read (and the last) and ``numbers``; its errors are raised here."""
        if self._reader is None:
            raise RuntimeError("CaseRowWorker.rows() outside its with-block")
        while True:
            message = self._next_message()
            if message is None:
                raise WorkerDied("the process building case rows ended unexpectedly")
            kind, payload = pickle.loads(message)
            if kind == "error":
                raise payload
            if kind == "end":
                self._fraction, self.total = payload
                return
            chunk, chunk_numbers, marks = payload
            if numbers is not None:
                numbers.extend(chunk_numbers)
            start = 0
            for pos, read, built, fraction, total in marks:
                yield from chunk[start:pos]
                start = pos
                self._fraction, self.total = fraction, total
                if on_row is not None:
                    on_row(read, built)
            yield from chunk[start:]


def _build(source: FileSource, builder: CaseBuilder, limit: int | None, out: Connection) -> None:
    """The child: build every row and send a chunk every :data:`CHUNK_ROWS` rows read, then
    ``end`` or the error raised (after the chunk built so far)."""
    chunk: list[CaseRow] = []
    numbers: list[int] = []
    marks: list[_Mark] = []
    last = [0, 0, 0]  # rows read and cases built at the last on_row, rows read of the last mark

    def mark() -> None:
        last[2] = last[0]
        marks.append((len(chunk), last[0], last[1], source.read_fraction(), source.total))

    def send(kind: str, payload: Any) -> None:
        out.send_bytes(pickle.dumps((kind, payload), protocol=pickle.HIGHEST_PROTOCOL))

    def flush(final: bool = False) -> None:
        if final and last[0] != last[2]:  # the last row read: the parent's counter ends there
            mark()
        send("rows", (chunk, numbers, marks))
        chunk.clear()  # in place: case_rows holds ``numbers``
        numbers.clear()
        marks.clear()

    def on_row(read: int, built: int) -> None:
        last[0], last[1] = read, built
        if read % _MARK_EVERY == 0:
            if read % CHUNK_ROWS == 0:  # rows read, not built: bad rows still move progress
                flush()
            mark()

    try:
        for row in case_rows(source.rows(), builder, limit, on_row, numbers):
            chunk.append(row)
        flush(final=True)
        send("end", (source.read_fraction(), source.total))
    except BaseException as exc:  # every failure goes to the parent
        flush(final=True)
        try:
            pickle.loads(pickle.dumps(exc))
        except Exception:  # one that does not round-trip
            exc = RuntimeError(f"{type(exc).__name__}: {exc}")
        exc.__traceback__ = None
        send("error", exc)
