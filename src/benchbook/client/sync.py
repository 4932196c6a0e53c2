"""The synchronous client (httpx): ``Client(url=None, api_key=None)``.

Every method sends one or more :mod:`benchbook.client._ops` calls; answers are the same pydantic
contracts the server returns, errors the same :class:`~benchbook.errors.BenchbookError`
subclasses (see :mod:`benchbook.client._calls`).
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

from benchbook.client import _ops as ops
from benchbook.client._calls import ATTEMPTS, Call, settings
from benchbook.client._common import (
    ExportFormat,
    ImportProgressCallback,
    job_outcome,
    pinned,
    write_stream,
)
from benchbook.client._stream import DROPPED, CaseLines, stalled
from benchbook.client._sync_http import SyncHTTP
from benchbook.client._sync_runs import Runs
from benchbook.contracts import Case, DatasetDiff
from benchbook.contracts.dataset import Dataset
from benchbook.contracts.imports import ImportRequest
from benchbook.contracts.jobs import ImportJob
from benchbook.contracts.registry import DatasetPage, DatasetView, RegisterResult, VersionInfo
from benchbook.errors import Unavailable


class Client(SyncHTTP):
    """A Benchbook server over HTTP.

    Args:
        url: the server's base URL (default ``BENCHBOOK_URL``, else ``http://127.0.0.1:8000``).
        api_key: a ``bb_…`` key sent as ``Authorization: Bearer`` (default
            ``BENCHBOOK_API_KEY``; none: only an open local server answers).
        timeout: seconds per request (connect, read, write).
        retries: attempts per request on connection errors and 502/503 (≥ 1).
        transport: an httpx transport (tests, proxies).

    Namespaces: :attr:`datasets`, :attr:`imports`, :attr:`runs`. Use as a context manager or
    call :meth:`close`.
    """

    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 60.0,
        retries: int = ATTEMPTS,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.url, headers = settings(url, api_key)
        self.http = httpx.Client(
            base_url=self.url, headers=headers, timeout=timeout, transport=transport
        )
        self.attempts = retries
        self.datasets = Datasets(self)
        self.imports = Imports(self)
        self.runs = Runs(self)

    def cases(self, ref: str, page_size: int = ops.PAGE) -> Iterator[Case]:
        """Every case of ``ref`` (``id``, ``id@version`` or ``id@tag``) in order, read from the
        server's streamed JSONL export and validated into ``Case`` one line at a time (one
        read chunk in memory). The ref is pinned to its exact version first, so a new
        ``latest`` mid-way never mixes versions; a dropped connection resumes after the last
        whole case received (no duplicates, no gaps; ``Unavailable`` after ``retries`` drops
        in a row without a new case). ``page_size`` is kept for callers of the paged reader
        and no longer used."""
        return self.datasets.cases(ref, page_size)

    def close(self) -> None:
        """Close the connection pool."""
        self.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class Datasets:
    """``client.datasets``: list, get, versions, diff, register, export, cases."""

    def __init__(self, client: SyncHTTP) -> None:
        self._c = client

    def list(
        self,
        search: str | None = None,
        owner: str = "all",
        sort: str = "name",
        limit: int = 50,
        offset: int = 0,
    ) -> DatasetPage:
        """Visible datasets, searched, sorted (``name``, ``updated``, ``cases``) and paged."""
        return self._c.call(ops.list_datasets(search, owner, sort, limit, offset))

    def get(self, ref: str, after: int | None = None, limit: int = 50) -> DatasetView:
        """A version's metadata with one page of cases (``next_after`` continues it).

        Raises:
            NotFound: unknown id or version, or one of another workspace.
        """
        return self._c.call(ops.get_dataset(ref, after, limit))

    def case(self, ref: str, case_id: str) -> Case:
        """One case by id."""
        return self._c.call(ops.get_case(ref, case_id))

    def versions(self, dataset_id: str) -> builtins.list[VersionInfo]:
        """Live versions, highest SemVer first."""
        return self._c.call(ops.list_versions(dataset_id))

    def diff(self, dataset_id: str, base: str, candidate: str = "latest") -> DatasetDiff:
        """Added, removed and changed cases between two versions (or tags)."""
        return self._c.call(ops.diff(dataset_id, base, candidate))

    def register(
        self, dataset: Dataset | dict[str, Any] | bytes | Path, shared: bool = False
    ) -> RegisterResult:
        """Register a version: a :class:`Dataset`, its JSON as a dict or bytes, or a JSON file.

        Raises:
            InvalidInput: an invalid dataset (``details.errors`` by path).
            Conflict: the version exists with different content.
        """
        body = dataset.read_bytes() if isinstance(dataset, Path) else ops.dataset_body(dataset)
        return self._c.call(ops.register(body, shared))

    def cases(self, ref: str, page_size: int = ops.PAGE) -> Iterator[Case]:
        """See :meth:`Client.cases`."""
        view = self.get(ref, None, 1)
        exact = pinned(view)
        lines = CaseLines(view.version.cases)
        failures = 0
        while not lines.done():
            before = lines.received
            try:
                response = self._c._send(ops.export_cases(exact, lines.after()), stream=True)
                try:
                    for chunk in response.iter_bytes():
                        yield from lines.feed(chunk)
                finally:
                    response.close()
                if lines.done():
                    return
                cause: Exception = Unavailable("the export ended before the last case")
            except DROPPED as exc:
                cause = exc
            failures = stalled(lines, before, failures, self._c.attempts, cause)

    def export(self, ref: str, out: Path, format: ExportFormat = "jsonl") -> int:
        """Write a version to ``out``: ``jsonl`` one canonical case per line (the server's
        export stream, as ``benchbook datasets export``), or ``parquet``/``hf`` a directory that
        ``datasets.load_dataset`` and an lm-eval task file read (see
        :mod:`benchbook.datasets.flat`). Returns the number of cases written.

        Raises:
            InvalidInput: ``out`` cannot be written (or, for a directory, is not empty).
        """
        if format == "jsonl":
            response = self._c._send(Call("GET", ops.export_path(ref), lambda r: None), stream=True)
            try:
                return write_stream(out, response.iter_bytes())
            finally:
                response.close()
        from benchbook.datasets.flat import write_export

        view = self.get(ref, None, 1)
        return write_export(self.cases(pinned(view)), out, format, view.version)


class Imports:
    """``client.imports``: start an import job and follow its progress."""

    def __init__(self, client: SyncHTTP) -> None:
        self._c = client

    def start(self, request: ImportRequest | dict[str, Any]) -> ImportJob:
        """Start an import job (answers at once, state ``queued``)."""
        return self._c.call(ops.start_import(request))

    def get(self, job_id: str) -> ImportJob:
        """A job's state, progress and result or error."""
        return self._c.call(ops.get_import(job_id))

    def wait(
        self,
        job_id: str,
        progress: ImportProgressCallback | None = None,
        poll_s: float = 0.5,
        timeout_s: float | None = None,
    ) -> ImportJob:
        """Poll until the job finishes; ``progress(job)`` after every poll.

        Returns:
            The succeeded job (``result`` set).

        Raises:
            BenchbookError: the job's own error (``InvalidInput`` for bad rows, ``Cancelled``
                …), raised as the subclass its ``code`` names.
            TimeoutError: not finished after ``timeout_s`` seconds.
        """
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            job = self.get(job_id)
            if progress is not None:
                progress(job)
            if job_outcome(job):
                return job
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"import {job_id} still {job.state} after {timeout_s} s")
            time.sleep(poll_s)

    def run(
        self,
        request: ImportRequest | dict[str, Any],
        progress: ImportProgressCallback | None = None,
    ) -> ImportJob:
        """:meth:`start` then :meth:`wait`."""
        return self.wait(self.start(request).id, progress)


__all__ = ["Client"]
