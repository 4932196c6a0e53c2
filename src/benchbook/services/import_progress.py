"""Import progress (SPEC E.5): the counter that reports rows read and cases built while an
import streams, the bounds on what one import may store, the read notes of a source, and the
error for a source without rows."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, MutableSequence, Sequence
from contextlib import ExitStack
from typing import Protocol

from benchbook.contracts import SourceRef
from benchbook.contracts.imports import ImportProgress
from benchbook.datasets.mapping import CaseBuilder, case_rows
from benchbook.datasets.row_worker import CaseRowWorker, worker_fits
from benchbook.datasets.sources.base import RowSource
from benchbook.datasets.sources.files import FileSource
from benchbook.errors import InvalidInput, PayloadTooLarge
from benchbook.settings import Settings
from benchbook.store.datasets import CaseRow

PROGRESS_EVERY = 1000
PROGRESS_INTERVAL_S = 0.25
Progress = Callable[[ImportProgress], None]


class CountedSource(Protocol):
    """What progress reads of a source: its lineage and row count when known (a
    :class:`RowSource`, or the :class:`~benchbook.datasets.row_worker.CaseRowWorker` that reads
    it in a second process); an optional ``read_fraction()`` and ``notes`` are used when there."""

    ref: SourceRef
    total: int | None


def no_rows(source: CountedSource) -> InvalidInput:
    """The error for a source that yielded no rows: an import never registers an empty version
    (``register_dataset`` with an explicit empty ``cases`` list still may)."""
    ref = source.ref
    name = ref.file or ref.dataset or "the source"
    if ref.dataset and ref.split:
        name = f"{ref.dataset} ({ref.split})"
    return InvalidInput(
        f"{name} has no rows; nothing imported", {"errors": [{"path": name, "message": "no rows"}]}
    )


def read_fraction(source: CountedSource, rows_read: int) -> float | None:
    """The share of ``source`` read so far, 0.0 to 1.0: the source's own ``read_fraction()``
    (bytes of a JSONL or CSV file, ``datasets/sources/files.py``) when it has one and knows,
    else ``rows_read`` of ``source.total`` when that is known, else None."""
    meter = getattr(source, "read_fraction", None)
    fraction = meter() if callable(meter) else None
    if fraction is not None:
        return float(fraction)
    total = source.total
    return min(1.0, rows_read / total) if total else None


def source_notes(source: CountedSource) -> list[str]:
    """How the source was read when not the plain way (a Hugging Face fallback), in order."""
    return list(getattr(source, "notes", None) or [])


def bounded_rows(
    stream: Iterator[CaseRow], settings: Settings, numbers: Sequence[int], word: str
) -> Iterator[CaseRow]:
    """``stream`` as is, until it holds more than ``settings.import_max_rows`` cases or more
    than ``settings.import_max_bytes`` bytes of case bodies (canonical JSON): then
    PayloadTooLarge (413) naming the setting, the bound and the ``word`` (``line``/``row``) of
    the source where it tripped (``numbers[-1]``, filled as the stream yields). Raised inside
    the import's transaction, so nothing is stored (issue 27: a 4 MB gzip of valid rows wrote
    ~100 GB)."""
    max_rows, max_bytes = settings.import_max_rows, settings.import_max_bytes
    stored = 0
    for count, row in enumerate(stream, 1):
        stored += len(row[1])
        if count > max_rows:
            raise _past("import_max_rows", max_rows, "cases", numbers, word)
        if stored > max_bytes:
            raise _past("import_max_bytes", max_bytes, "bytes of cases", numbers, word)
        yield row


def _past(setting: str, limit: int, what: str, numbers: Sequence[int], word: str) -> Exception:
    where = f"{word} {numbers[-1]}" if numbers else "the source"
    problem = (
        f"the import stores more than {limit} {what} ({setting}); nothing was imported. "
        f"Import fewer rows ('limit'), or raise BENCHBOOK_{setting.upper()}"
    )
    return PayloadTooLarge(
        f"{where}: {problem}",
        {
            "setting": setting,
            "limit": limit,
            "where": where,
            "errors": [{"path": where, "message": problem, "limit": limit}],
        },
    )


class ImportCounter:
    """Rows read, cases built and the share of the source read (:func:`read_fraction`),
    reported every 1000 rows or, at a 100-row boundary (a viewer page), once 0.25 s have
    passed; and once more when the stream ends (fraction 1.0), still inside the transaction, so
    a progress callback that raises (a cancelled job) stores nothing."""

    def __init__(self, progress: Progress | None, source: CountedSource) -> None:
        self.progress, self.source = progress, source
        self.rows = self.cases = 0
        self.finished = False
        self.reported_at = time.monotonic()

    def on_row(self, rows_read: int, cases_built: int) -> None:
        self.rows, self.cases = rows_read, cases_built
        if self.progress is None:
            return
        if rows_read % PROGRESS_EVERY == 0 or (
            rows_read % 100 == 0 and time.monotonic() - self.reported_at >= PROGRESS_INTERVAL_S
        ):
            self.report()

    def report(self) -> None:
        if self.progress is not None:
            self.reported_at = time.monotonic()
            fraction = 1.0 if self.finished else read_fraction(self.source, self.rows)
            self.progress(
                ImportProgress(
                    rows_read=self.rows,
                    cases_built=self.cases,
                    total=self.source.total,  # a JSON array's is known once it is parsed
                    fraction=fraction,
                    notes=source_notes(self.source),
                )
            )

    def track(self, stream: Iterator[CaseRow]) -> Iterator[CaseRow]:
        """``stream`` as is; at its end, InvalidInput when no row was read (rolls back)."""
        yield from stream
        if self.rows == 0:
            raise no_rows(self.source)
        self.finished = True
        self.report()


def counted_rows(
    stack: ExitStack,
    source: RowSource,
    builder: CaseBuilder,
    limit: int | None,
    progress: Progress | None,
    numbers: MutableSequence[int],
    row_worker: bool | None = None,
) -> tuple[ImportCounter, Iterator[CaseRow]]:
    """The counter and the case-row stream of an import (``case_rows`` with the counter's
    ``on_row`` and ``numbers``). With ``row_worker`` (None: ``worker_fits`` decides — a local
    file of 1 MiB or more, a single-threaded process, 2+ CPUs), a local file's rows are built
    in a forked second process (``datasets/row_worker.py``) that ``stack`` stops on exit; True
    only where no other thread of the process can hold a lock the child would need."""
    if row_worker is None:
        row_worker = worker_fits(source)
    if row_worker and isinstance(source, FileSource):
        worker = stack.enter_context(CaseRowWorker(source, builder, limit))
        counter = ImportCounter(progress, worker)
        return counter, worker.rows(counter.on_row, numbers)
    counter = ImportCounter(progress, source)
    return counter, case_rows(source.rows(), builder, limit, counter.on_row, numbers)
