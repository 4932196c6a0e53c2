"""The row-source interface every source implements.

A source yields ``(row_number, row)`` pairs where ``row`` is a ``dict[str, JSON]`` and
``row_number`` is the 1-based number a person would use to find the row (the line number for
JSONL and CSV, the element index + 1 for JSON arrays and Parquet). Sources stream: they never
hold every row. ``ref`` describes where the rows came from and is complete (sha256 or resolved
revision filled in) once iteration has finished. ``total`` is the row count when known upfront
(used for progress bars), else None.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

from benchbook.contracts import SourceRef

Row = dict[str, Any]


class RowSource(Protocol):
    """A stream of source rows plus its lineage reference."""

    ref: SourceRef
    total: int | None

    def rows(self) -> Iterator[tuple[int, Row]]:
        """Yield ``(row_number, row)`` in source order. Raises InvalidInput / UpstreamError."""
        ...
