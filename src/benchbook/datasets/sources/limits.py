"""Bounds on what one source may make the server hold: decompressed bytes, one record (a JSONL
line or a CSV line), and a document parsed whole (a JSON file, a gzip-compressed Parquet file).

A 4 MB gzip upload can inflate to 4 GiB on one line; read unbounded it took the server to
5.9 GB and killed it. Past a bound the read stops at once with PayloadTooLarge (413) naming the
file, the bound and the setting that raises it.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import IO, Any

from benchbook.errors import PayloadTooLarge
from benchbook.settings import Settings


@dataclass(frozen=True)
class SourceLimits:
    """Bounds in bytes (defaults in parentheses).

    Attributes:
        record_bytes: one JSONL or CSV line (64 MiB; ``BENCHBOOK_MAX_RECORD_BYTES``).
        document_bytes: a JSON document, or a gzip Parquet file, read whole (256 MiB;
            ``BENCHBOOK_MAX_DOCUMENT_BYTES``).
        decompressed_bytes: everything a gzip file inflates to (8 GiB;
            ``BENCHBOOK_MAX_DECOMPRESSED_BYTES``).
    """

    record_bytes: int = 64 << 20
    document_bytes: int = 256 << 20
    decompressed_bytes: int = 8 << 30

    @classmethod
    def from_settings(cls, settings: Settings) -> SourceLimits:
        """The bounds configured by ``settings``."""
        return cls(
            record_bytes=settings.max_record_bytes,
            document_bytes=settings.max_document_bytes,
            decompressed_bytes=settings.max_decompressed_bytes,
        )


def too_large(where: str, what: str, limit_bytes: int, setting: str) -> PayloadTooLarge:
    """PayloadTooLarge: ``where`` (file and line) exceeds ``limit_bytes``; ``setting`` raises it."""
    return PayloadTooLarge(
        f"{where}: {what} is larger than {limit_bytes} bytes; split the data, or raise the "
        f"bound with {setting}",
        {"limit_bytes": limit_bytes, "setting": setting, "where": where},
    )


class CountedReader(io.RawIOBase):
    """A raw reader over ``inner`` (e.g. a gzip stream) that refuses to yield more than
    ``limit_bytes`` in total."""

    def __init__(self, inner: IO[bytes], limit_bytes: int, name: str) -> None:
        super().__init__()
        self.inner = inner
        self.limit_bytes = limit_bytes
        self.name_ = name
        self.seen = 0

    def readable(self) -> bool:
        """Always True."""
        return True

    def readinto(self, buffer: Any) -> int:
        """Fill ``buffer`` from ``inner``; PayloadTooLarge once past the bound."""
        count = self.inner.readinto(buffer)  # type: ignore[attr-defined]
        self.seen += count or 0
        if self.seen > self.limit_bytes:
            raise too_large(
                self.name_,
                "the decompressed content",
                self.limit_bytes,
                "BENCHBOOK_MAX_DECOMPRESSED_BYTES",
            )
        return int(count or 0)

    def tell(self) -> int:
        """Bytes yielded so far (lets a BufferedReader on top report its own position)."""
        return self.seen

    def close(self) -> None:
        """Close ``inner`` too."""
        try:
            self.inner.close()
        finally:
            super().close()
