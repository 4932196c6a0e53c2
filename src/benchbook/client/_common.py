"""What the sync and async clients share besides their calls: outcome checks and types."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from benchbook.client._calls import error_of_envelope
from benchbook.contracts.jobs import ImportJob
from benchbook.contracts.registry import DatasetView
from benchbook.contracts.run import Run
from benchbook.datasets.flat import ExportFormat, write_atomically

ImportProgressCallback = Callable[[ImportJob], None]
"""``progress(job)`` after each poll of an import job (``job.progress`` counts rows, cases)."""
RunProgressCallback = Callable[[Run], None]
"""``progress(run)`` after each poll of a run (``run.counts``)."""

TERMINAL_RUN = frozenset({"finished", "failed", "cancelled", "budget_exhausted"})


def pinned(view: DatasetView) -> str:
    """``id@version`` of the exact version a page came from."""
    return f"{view.version.id}@{view.version.version}"


def run_done(run: Run) -> bool:
    """Whether a run has ended."""
    return run.status in TERMINAL_RUN


def job_outcome(job: ImportJob) -> bool:
    """True when the job succeeded, False while it is queued or running.

    Raises:
        BenchbookError: the failed or cancelled job's error envelope, as its subclass.
    """
    if job.state == "succeeded":
        return True
    if job.state in ("failed", "cancelled"):
        if job.error is None:
            raise error_of_envelope("error", f"import {job.id} {job.state}", {"id": job.id})
        raise error_of_envelope(job.error.code, job.error.message, job.error.details)
    return False


def write_stream(out: Path, chunks: Iterable[bytes]) -> int:
    """Write a streamed JSONL export to ``out`` atomically; the number of lines."""
    return write_atomically(out, chunks)


__all__ = ["ExportFormat"]
