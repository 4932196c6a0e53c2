"""The asynchronous client (httpx): ``AsyncClient(url=None, api_key=None)``, the same methods
as :class:`~benchbook.client.sync.Client` as coroutines (iterators are async iterators)."""

from __future__ import annotations

import asyncio
import builtins
import time
from collections.abc import AsyncIterator
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import httpx
from tenacity import AsyncRetrying

from benchbook.client import _ops as ops
from benchbook.client._calls import ATTEMPTS, Call, check, error_of, retry_policy, settings
from benchbook.client._calls import translate_final as _final
from benchbook.client._common import (
    ExportFormat,
    ImportProgressCallback,
    RunProgressCallback,
    job_outcome,
    pinned,
    run_done,
)
from benchbook.client._stream import DROPPED, CaseLines, stalled
from benchbook.contracts import Case, DatasetDiff
from benchbook.contracts.comparison import Comparison
from benchbook.contracts.dataset import Dataset, GraderSpec
from benchbook.contracts.imports import ImportRequest
from benchbook.contracts.jobs import ImportJob
from benchbook.contracts.leaderboard import Leaderboard
from benchbook.contracts.registry import DatasetPage, DatasetView, RegisterResult, VersionInfo
from benchbook.contracts.run import CaseResult, ReportedResult, Run, RunSettings
from benchbook.contracts.run_imports import ImportedRun
from benchbook.contracts.scorecard import Scorecard
from benchbook.errors import Unavailable

T = TypeVar("T")


class AsyncClient:
    """A Benchbook server over HTTP, for asyncio code. Arguments as for ``Client``; use
    ``async with`` or ``await client.aclose()``."""

    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 60.0,
        retries: int = ATTEMPTS,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.url, headers = settings(url, api_key)
        self._api_key = api_key
        self.http = httpx.AsyncClient(
            base_url=self.url, headers=headers, timeout=timeout, transport=transport
        )
        self.attempts = retries
        self.datasets = AsyncDatasets(self)
        self.imports = AsyncImports(self)
        self.runs = AsyncRuns(self)

    async def call(self, call: Call[T]) -> T:
        """Send one call with the retry policy; its parsed answer (errors as ``Client.call``)."""
        return call.parse(await self._send(call, stream=False))

    async def _send(self, call: Call[Any], stream: bool) -> httpx.Response:
        try:
            async for attempt in AsyncRetrying(**retry_policy(self.attempts)):
                with attempt:
                    response = await self.http.send(call.request(self.http), stream=stream)
                    if stream and not response.is_success:
                        await response.aread()
                        await response.aclose()
                    response = check(response)
        except Exception as exc:
            final = _final(exc)
            if final is exc:
                raise
            raise final from exc
        if not response.is_success:
            raise error_of(response)
        return response

    def cases(self, ref: str, page_size: int = ops.PAGE) -> AsyncIterator[Case]:
        """Every case of ``ref`` in order from the streamed JSONL export, resumed after a
        dropped connection (see ``Client.cases``)."""
        return self.datasets.cases(ref, page_size)

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self.http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


class AsyncDatasets:
    """``client.datasets`` of the async client (methods as ``Client.datasets``)."""

    def __init__(self, client: AsyncClient) -> None:
        self._c = client

    async def list(
        self,
        search: str | None = None,
        owner: str = "all",
        sort: str = "name",
        limit: int = 50,
        offset: int = 0,
    ) -> DatasetPage:
        """Visible datasets, searched, sorted and paged."""
        return await self._c.call(ops.list_datasets(search, owner, sort, limit, offset))

    async def get(self, ref: str, after: int | None = None, limit: int = 50) -> DatasetView:
        """A version's metadata with one page of cases."""
        return await self._c.call(ops.get_dataset(ref, after, limit))

    async def case(self, ref: str, case_id: str) -> Case:
        """One case by id."""
        return await self._c.call(ops.get_case(ref, case_id))

    async def versions(self, dataset_id: str) -> builtins.list[VersionInfo]:
        """Live versions, highest SemVer first."""
        return await self._c.call(ops.list_versions(dataset_id))

    async def diff(self, dataset_id: str, base: str, candidate: str = "latest") -> DatasetDiff:
        """Added, removed and changed cases between two versions (or tags)."""
        return await self._c.call(ops.diff(dataset_id, base, candidate))

    async def register(
        self, dataset: Dataset | dict[str, Any] | bytes | Path, shared: bool = False
    ) -> RegisterResult:
        """Register a version (a Dataset, a dict, JSON bytes or a JSON file)."""
        body = dataset.read_bytes() if isinstance(dataset, Path) else ops.dataset_body(dataset)
        return await self._c.call(ops.register(body, shared))

    async def cases(self, ref: str, page_size: int = ops.PAGE) -> AsyncIterator[Case]:
        """Every case of ``ref`` in order, pinned to its exact version (see ``Client.cases``)."""
        view = await self.get(ref, None, 1)
        exact = pinned(view)
        lines = CaseLines(view.version.cases)
        failures = 0
        while not lines.done():
            before = lines.received
            try:
                response = await self._c._send(ops.export_cases(exact, lines.after()), stream=True)
                try:
                    async for chunk in response.aiter_bytes():
                        for case in lines.feed(chunk):
                            yield case
                finally:
                    await response.aclose()
                if lines.done():
                    return
                cause: Exception = Unavailable("the export ended before the last case")
            except DROPPED as exc:
                cause = exc
            failures = stalled(lines, before, failures, self._c.attempts, cause)

    async def export(self, ref: str, out: Path, format: ExportFormat = "jsonl") -> int:
        """As ``Client.datasets.export``, run by a sync client in a worker thread (the stream is
        written as it arrives, never held in memory)."""
        from benchbook.client.sync import Client

        def export_sync() -> int:
            with Client(self._c.url, self._c._api_key, retries=self._c.attempts) as client:
                return client.datasets.export(ref, out, format)

        return await asyncio.to_thread(export_sync)


class AsyncImports:
    """``client.imports`` of the async client."""

    def __init__(self, client: AsyncClient) -> None:
        self._c = client

    async def start(self, request: ImportRequest | dict[str, Any]) -> ImportJob:
        """Start an import job."""
        return await self._c.call(ops.start_import(request))

    async def get(self, job_id: str) -> ImportJob:
        """A job's state, progress and result or error."""
        return await self._c.call(ops.get_import(job_id))

    async def wait(
        self,
        job_id: str,
        progress: ImportProgressCallback | None = None,
        poll_s: float = 0.5,
        timeout_s: float | None = None,
    ) -> ImportJob:
        """Poll until the job finishes (errors as ``Client.imports.wait``)."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            job = await self.get(job_id)
            if progress is not None:
                progress(job)
            if job_outcome(job):
                return job
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"import {job_id} still {job.state} after {timeout_s} s")
            await asyncio.sleep(poll_s)

    async def run(
        self,
        request: ImportRequest | dict[str, Any],
        progress: ImportProgressCallback | None = None,
    ) -> ImportJob:
        """:meth:`start` then :meth:`wait`."""
        return await self.wait((await self.start(request)).id, progress)


class AsyncRuns:
    """``client.runs`` of the async client."""

    def __init__(self, client: AsyncClient) -> None:
        self._c = client

    async def start_run(
        self,
        dataset: str,
        harness: str,
        graders: list[GraderSpec] | list[dict[str, Any]] | None = None,
        settings: RunSettings | dict[str, Any] | None = None,
        preflight: bool = True,
    ) -> Run:
        """Queue a run of a registered harness (``preflight``: see ``Client``)."""
        return await self._c.call(ops.start_run(dataset, harness, graders, settings, preflight))

    async def report(
        self,
        dataset: str,
        harness: str,
        results: list[ReportedResult] | list[dict[str, Any]],
        graders: list[GraderSpec] | list[dict[str, Any]] | None = None,
    ) -> Run:
        """Report an external harness's answers; graded by the server (see ``Client``)."""
        return await self._c.call(ops.report_run(dataset, harness, results, graders))

    async def import_inspect(
        self,
        log: str | Path,
        dataset: str,
        harness: str | None = None,
        graders: list[GraderSpec] | list[dict[str, Any]] | None = None,
        allow_unmatched: bool = False,
    ) -> ImportedRun:
        """Upload one Inspect AI log (``.eval`` or ``.json``) as a run of ``dataset``
        (``id@version``): graded by the server's graders, Inspect's scores kept as
        ``imported_scorecard``.

        Raises:
            InvalidInput: unmatched samples (listed), a log of another dataset version, a
                truncated or oversized log; nothing is registered.
        """
        request = {
            "dataset": dataset,
            "harness": harness,
            "graders": graders,
            "allow_unmatched": allow_unmatched,
        }
        return await self._c.call(ops.import_inspect_run(Path(log), request))

    async def import_lm_eval(
        self,
        output: str | Path,
        dataset: str,
        task: str | None = None,
        filter: str | None = None,
        harness: str | None = None,
        graders: list[GraderSpec] | list[dict[str, Any]] | None = None,
        allow_unmatched: bool = False,
    ) -> ImportedRun:
        """Upload one lm-eval task's ``--log_samples`` output (the ``--output_path`` folder)
        as a run of ``dataset``; ``filter`` picks the answer (default the first filter).

        Raises:
            InvalidInput: as :meth:`import_inspect`; several tasks without ``task``; an
                unknown filter.
        """
        request = {
            "dataset": dataset,
            "harness": harness,
            "graders": graders,
            "allow_unmatched": allow_unmatched,
            "task": task,
            "filter": filter,
        }
        return await self._c.call(ops.import_lm_eval_run(Path(output), request))

    async def get(self, run_id: str) -> Run:
        """One run with its counts so far."""
        return await self._c.call(ops.get_run(run_id))

    async def wait(
        self,
        run_id: str,
        progress: RunProgressCallback | None = None,
        poll_s: float = 1.0,
        timeout_s: float | None = None,
    ) -> Run:
        """Poll until the run ends; TimeoutError after ``timeout_s`` seconds."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            run = await self.get(run_id)
            if progress is not None:
                progress(run)
            if run_done(run):
                return run
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"run {run_id} still {run.status} after {timeout_s} s")
            await asyncio.sleep(poll_s)

    async def resume(self, run_id: str, budget_usd: float | None = None) -> Run:
        """Queue the run again; ``budget_usd``: a new cap for the rest of the run."""
        return await self._c.call(ops.requeue_run(run_id, "resume", budget_usd))

    async def retry(self, run_id: str, budget_usd: float | None = None) -> Run:
        """Queue the run's errored pairs again; ``budget_usd`` as for :meth:`resume`."""
        return await self._c.call(ops.requeue_run(run_id, "retry", budget_usd))

    async def rescore(
        self,
        run_id: str,
        graders: list[GraderSpec] | list[dict[str, Any]],
        preflight: bool = True,
    ) -> Scorecard:
        """Grade the run's saved traces under another plan: a new scorecard."""
        return await self._c.call(ops.rescore_run(run_id, graders, preflight))

    async def scorecard_results(
        self, scorecard_id: str, page_size: int = 500, outcome: str | None = None
    ) -> AsyncIterator[CaseResult]:
        """Every (case, sample) result of one scorecard, a page at a time."""
        after: str | None = None
        while True:
            call = ops.list_scorecard_results(scorecard_id, after, page_size, outcome)
            page = await self._c.call(call)
            for result in page:
                yield result
            if not page:  # a page may hold fewer than page_size (a byte bound): go on
                return
            after = f"{page[-1].position}:{page[-1].sample}"

    async def results(
        self, run_id: str, page_size: int = 500, scorecard: str | None = None
    ) -> AsyncIterator[CaseResult]:
        """Every (case, sample) result in dataset order, a page at a time."""
        after: str | None = None
        while True:
            page = await self._c.call(ops.list_results(run_id, after, page_size, scorecard))
            for result in page:
                yield result
            if not page:  # a page may hold fewer than page_size (a byte bound): go on
                return
            after = f"{page[-1].position}:{page[-1].sample}"

    async def scorecard(self, run: Run | str) -> Scorecard:
        """The run's own scorecard (a Run, a run id or a scorecard id)."""
        scorecard_id = run if isinstance(run, str) and run.startswith("sc_") else None
        if scorecard_id is None:
            record = await self.get(run) if isinstance(run, str) else run
            scorecard_id = record.scorecard_id or ""
        return await self._c.call(ops.get_scorecard(scorecard_id))

    async def compare(
        self, baseline: str, candidate: str, seed: int = 0, resamples: int = 10_000
    ) -> Comparison:
        """Baseline vs candidate (SPEC H.7)."""
        return await self._c.call(ops.compare(baseline, candidate, seed, resamples))

    async def leaderboard(
        self,
        dataset: str,
        select: str = "latest",
        sort: str = "pass_rate",
        tag: str | None = None,
        plan: str | None = None,
    ) -> Leaderboard:
        """The leaderboard of ``dataset`` (``id`` or ``id@version``), as the sync client's."""
        return await self._c.call(ops.get_leaderboard(dataset, select, sort, tag, plan))
