"""``client.runs`` of the synchronous :class:`~benchbook.client.sync.Client`: start, report,
wait, results, scorecards and comparisons (split from :mod:`benchbook.client.sync`, issue 32).
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from benchbook.client import _ops as ops
from benchbook.client._common import (
    RunProgressCallback,
    run_done,
    write_stream,
)
from benchbook.client._sync_http import SyncHTTP
from benchbook.contracts.comparison import Comparison
from benchbook.contracts.dataset import GraderSpec
from benchbook.contracts.history import CaseHistoryItem, FlakyCase
from benchbook.contracts.leaderboard import Leaderboard
from benchbook.contracts.run import CaseResult, ReportedResult, Run, RunSettings
from benchbook.contracts.run_imports import ImportedRun
from benchbook.contracts.scorecard import Scorecard


class Runs:
    """``client.runs``: start, report, wait, results, scorecards and comparisons."""

    def __init__(self, client: SyncHTTP) -> None:
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
