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
from typing import Any, Literal, TypeVar

import httpx
from tenacity import Retrying

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
    write_stream,
)
from benchbook.client._stream import DROPPED, CaseLines, stalled
from benchbook.contracts import Case, DatasetDiff
from benchbook.contracts.comparison import Comparison
from benchbook.contracts.dataset import Dataset, GraderSpec
from benchbook.contracts.history import CaseHistoryItem, FlakyCase
from benchbook.contracts.imports import ImportRequest
from benchbook.contracts.jobs import ImportJob
from benchbook.contracts.leaderboard import Leaderboard
from benchbook.contracts.registry import DatasetPage, DatasetView, RegisterResult, VersionInfo
from benchbook.contracts.run import CaseResult, ReportedResult, Run, RunSettings
from benchbook.contracts.run_imports import ImportedRun
from benchbook.contracts.scorecard import Scorecard
from benchbook.errors import Unavailable

T = TypeVar("T")


class Client:
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

    def call(self, call: Call[T]) -> T:
        """Send one call with the retry policy; its parsed answer.

        Raises:
            BenchbookError: the subclass the answer's ``code`` names (``Unavailable`` when the
                server stayed unreachable or busy through every attempt).
        """
        return call.parse(self._send(call, stream=False))

    def _send(self, call: Call[Any], stream: bool) -> httpx.Response:
        try:
            for attempt in Retrying(**retry_policy(self.attempts)):
                with attempt:
                    response = self.http.send(call.request(self.http), stream=stream)
                    if stream and not response.is_success:
                        response.read()
                        response.close()
                    response = check(response)
        except Exception as exc:
            final = _final(exc)
            if final is exc:
                raise
            raise final from exc
        if not response.is_success:
            raise error_of(response)
        return response

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

    def __init__(self, client: Client) -> None:
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

    def __init__(self, client: Client) -> None:
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


class Runs:
    """``client.runs``: start, report, wait, results, scorecards and comparisons."""

    def __init__(self, client: Client) -> None:
        self._c = client

    def start_run(
        self,
        dataset: str,
        harness: str,
        graders: list[GraderSpec] | list[dict[str, Any]] | None = None,
        settings: RunSettings | dict[str, Any] | None = None,
        preflight: bool = True,
    ) -> Run:
        """Queue a run of a registered harness on ``dataset`` (the server's worker runs it);
        ``preflight``: the server asks each judge and openai-harness endpoint once first."""
        return self._c.call(ops.start_run(dataset, harness, graders, settings, preflight))

    def report(
        self,
        dataset: str,
        harness: str,
        results: list[ReportedResult] | list[dict[str, Any]],
        graders: list[GraderSpec] | list[dict[str, Any]] | None = None,
    ) -> Run:
        """Report what an external harness (``"my-agent@1.2.0"``) answered; the server grades
        it with its graders like any run and returns the finished run.

        Args:
            results: ``[{case_id, answer, sample?, error?, trace?}]``, each (case, sample) once.

        Raises:
            InvalidInput: an unknown case id or a repeated (case, sample), naming the rows.
        """
        return self._c.call(ops.report_run(dataset, harness, results, graders))

    def import_inspect(
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
        return self._c.call(ops.import_inspect_run(Path(log), request))

    def import_lm_eval(
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
        return self._c.call(ops.import_lm_eval_run(Path(output), request))

    def get(self, run_id: str) -> Run:
        """One run with its counts so far."""
        return self._c.call(ops.get_run(run_id))

    def wait(
        self,
        run_id: str,
        progress: RunProgressCallback | None = None,
        poll_s: float = 1.0,
        timeout_s: float | None = None,
    ) -> Run:
        """Poll until the run ends (finished, failed, cancelled, budget_exhausted);
        ``progress(run)`` after every poll. Raises TimeoutError after ``timeout_s`` seconds."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            run = self.get(run_id)
            if progress is not None:
                progress(run)
            if run_done(run):
                return run
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"run {run_id} still {run.status} after {timeout_s} s")
            time.sleep(poll_s)

    def resume(self, run_id: str, budget_usd: float | None = None) -> Run:
        """Queue the run again (only what is missing runs); ``budget_usd``: a new spend cap
        for the rest of the run."""
        return self._c.call(ops.requeue_run(run_id, "resume", budget_usd))

    def retry(self, run_id: str, budget_usd: float | None = None) -> Run:
        """Queue the run's errored pairs again; ``budget_usd`` as for :meth:`resume`."""
        return self._c.call(ops.requeue_run(run_id, "retry", budget_usd))

    def rescore(
        self,
        run_id: str,
        graders: list[GraderSpec] | list[dict[str, Any]],
        preflight: bool = True,
    ) -> Scorecard:
        """Grade the run's saved traces under another plan: a new scorecard."""
        return self._c.call(ops.rescore_run(run_id, graders, preflight))

    def scorecard_results(
        self, scorecard_id: str, page_size: int = 500, outcome: str | None = None
    ) -> Iterator[CaseResult]:
        """Every (case, sample) result of one scorecard (a rescore's too) with its scores and
        verdicts, in dataset order, a page at a time."""
        after: str | None = None
        while True:
            call = ops.list_scorecard_results(scorecard_id, after, page_size, outcome)
            page = self._c.call(call)
            yield from page
            if not page:  # a page may hold fewer than page_size (a byte bound): go on
                return
            after = f"{page[-1].position}:{page[-1].sample}"

    def results(
        self, run_id: str, page_size: int = 500, scorecard: str | None = None
    ) -> Iterator[CaseResult]:
        """Every (case, sample) result in dataset order, a page at a time (no traces; a page
        stops early past the server's byte bound, so paging ends at an empty page), with the
        scores of ``scorecard`` (one of the run's; default its own)."""
        after: str | None = None
        while True:
            page = self._c.call(ops.list_results(run_id, after, page_size, scorecard))
            yield from page
            if not page:  # a page may hold fewer than page_size (a byte bound): go on
                return
            after = f"{page[-1].position}:{page[-1].sample}"

    def scorecard(self, run: Run | str) -> Scorecard:
        """The run's own scorecard (a :class:`Run`, a run id or a scorecard id ``sc_…``)."""
        scorecard_id = run if isinstance(run, str) and run.startswith("sc_") else None
        if scorecard_id is None:
            record = self.get(run) if isinstance(run, str) else run
            scorecard_id = record.scorecard_id or ""
        return self._c.call(ops.get_scorecard(scorecard_id))

    def compare(
        self, baseline: str, candidate: str, seed: int = 0, resamples: int = 10_000
    ) -> Comparison:
        """Baseline vs candidate (scorecard ids, run ids, or a baseline tag), SPEC H.7."""
        return self._c.call(ops.compare(baseline, candidate, seed, resamples))

    def leaderboard(
        self,
        dataset: str,
        select: str = "latest",
        sort: str = "pass_rate",
        tag: str | None = None,
        plan: str | None = None,
    ) -> Leaderboard:
        """The leaderboard of ``dataset`` (``id`` or ``id@version``): one row per
        harness@version grouped by grader plan, the cost–accuracy frontier marked."""
        return self._c.call(ops.get_leaderboard(dataset, select, sort, tag, plan))

    def case_history(self, dataset_id: str, case_id: str) -> Iterator[CaseHistoryItem]:
        """Every result of ``case_id`` in the workspace's runs of ``dataset_id`` (any
        version), newest run first, a page of 100 at a time."""
        before: str | None = None
        while True:
            page = self._c.call(ops.list_case_results(dataset_id, case_id, before, 100))
            yield from page.items
            if page.next_before is None:
                return
            before = page.next_before

    def flaky(self, run_id: str) -> builtins.list[FlakyCase]:
        """The run's cases whose verdict differs across its samples or across the runs of
        its harness@version on its dataset version."""
        return self._c.call(ops.list_flaky_cases(run_id))

    def export(
        self,
        run_id: str,
        out: Path,
        format: Literal["jsonl", "csv"] = "jsonl",
        scorecard_id: str | None = None,
    ) -> int:
        """Stream a run's export (one row per (case, sample); ``benchbook runs export`` also
        writes Parquet) to ``out`` atomically; returns the lines written (CSV: with its header).

        Raises:
            NotFound: unknown run or scorecard. InvalidInput: ``out`` cannot be written.
        """
        response = self._c._send(ops.export_run(run_id, format, scorecard_id), stream=True)
        try:
            return write_stream(out, response.iter_bytes())
        finally:
            response.close()


__all__ = ["Client"]
