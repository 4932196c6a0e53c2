"""A temporary on-disk buffer of built case rows.

Remote sources (the Hugging Face viewer, Hub downloads) are read into a spool *before* the
registry transaction opens, so the network's pace never holds the database's write lock
(SQLite has one writer at a time; a slow viewer page would otherwise block every other write
for the whole import). Records are length-prefixed: ``u32 id length, id, u32 body length, body,
64 ASCII hex chars of sha256``. Memory stays flat: rows are written and read one at a time.
"""

from __future__ import annotations

import struct
import tempfile
from collections.abc import Iterable, Iterator
from typing import IO

_LEN = struct.Struct("<I")
_HASH_CHARS = 64

#: ``(case_id, canonical body, sha256 hex)``, as ``store.datasets.CaseRow``.
SpooledRow = tuple[str, bytes, str]


class CaseRowSpool:
    """Case rows drained to a temporary file, replayed in order; use as a context manager."""

    def __init__(self) -> None:
        # Closed by __exit__: the file lives as long as the spool.
        self._file: IO[bytes] = tempfile.TemporaryFile(prefix="benchbook-spool-")  # noqa: SIM115
        self.count = 0

    def __enter__(self) -> CaseRowSpool:
        return self

    def __exit__(self, *exc: object) -> None:
        self._file.close()

    def drain(self, rows: Iterable[SpooledRow]) -> CaseRowSpool:
        """Write every row (consuming ``rows``, with whatever errors it raises); returns self."""
        write = self._file.write
        for case_id, body, case_hash in rows:
            key = case_id.encode()
            write(_LEN.pack(len(key)))
            write(key)
            write(_LEN.pack(len(body)))
            write(body)
            write(case_hash.encode("ascii"))
            self.count += 1
        return self

    def replay(self) -> Iterator[SpooledRow]:
        """The drained rows, in order."""
        read = self._file.read
        self._file.seek(0)
        for _ in range(self.count):
            case_id = read(_LEN.unpack(read(_LEN.size))[0]).decode()
            body = read(_LEN.unpack(read(_LEN.size))[0])
            yield case_id, body, read(_HASH_CHARS).decode("ascii")
