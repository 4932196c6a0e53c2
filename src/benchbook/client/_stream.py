"""Reading a version's cases from the server's JSONL export (``GET …/cases.jsonl``), shared by
the sync and async clients: whole lines out of arbitrary chunks, each line validated into a
:class:`~benchbook.contracts.Case`, and where to resume after a dropped connection.

The export sends each case's stored canonical JSON, one per line, in position order (0…n-1,
dense), so the number of lines received is the keyset: a stream that drops after ``k`` lines is
resumed with ``?after=k-1`` and gives neither duplicates nor gaps. Only whole lines (ended by
``\\n``) count; a partial last line is dropped with the connection and read again.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx

from benchbook import errors
from benchbook.contracts import Case

#: Errors of a stream that broke after it started (connection reset, truncated chunked body,
#: read timeout): the read resumes from the last whole line.
DROPPED = (httpx.ReadError, httpx.RemoteProtocolError, httpx.ReadTimeout)


class CaseLines:
    """Cases from the chunks of one version's export, counting whole lines across resumes.

    Args:
        total: the version's case count (``VersionInfo.cases``); more lines than that is an
            error, fewer at the end means the stream must be resumed.
    """

    def __init__(self, total: int) -> None:
        self.total = total
        self.received = 0
        self._rest = b""

    def after(self) -> int | None:
        """The ``after`` of the next request: the last whole line's position, None at start."""
        return self.received - 1 if self.received else None

    def restart(self) -> None:
        """Forget a partial line (its connection is gone; the next stream sends it whole)."""
        self._rest = b""

    def feed(self, chunk: bytes) -> Iterator[Case]:
        """The cases of the whole lines completed by ``chunk``.

        Raises:
            BenchbookError: more lines than the version's case count.
            pydantic.ValidationError: a line that is not a valid case.
        """
        data = self._rest + chunk if self._rest else chunk
        end = data.rfind(b"\n")
        if end < 0:
            self._rest = data
            return
        self._rest = data[end + 1 :]
        lines = data[:end].split(b"\n")
        if self.received + len(lines) > self.total:
            raise errors.BenchbookError(
                f"the export sent more than the version's {self.total} cases",
                {"cases": self.total},
            )
        # Case's own validator, called directly: ``Case.model_validate_json`` does exactly this
        # behind one more Python frame (~0.4 µs of ~6 µs a case). One call per line, not one
        # ``TypeAdapter(list[Case])`` call per chunk: that measured no faster (issue 32) and
        # would hand out none of a chunk's cases before its first bad line.
        validate = Case.__pydantic_validator__.validate_json
        for line in lines:
            case = validate(line)
            self.received += 1
            yield case

    def done(self) -> bool:
        """Whether every case has arrived (a partial line left over is an error)."""
        if self.received == self.total and self._rest:
            raise errors.BenchbookError("the export ended inside a line", {"cases": self.total})
        return self.received == self.total


def stalled(lines: CaseLines, before: int, failures: int, attempts: int, exc: Exception) -> int:
    """Consecutive failures without a new line, after a stream broke (``before``: lines before
    that stream). Raises ``Unavailable`` once ``attempts`` streams in a row gave nothing."""
    failures = 0 if lines.received > before else failures + 1
    if failures >= attempts:
        raise errors.Unavailable(
            f"the case stream dropped {failures} times without progress at case"
            f" {lines.received} of {lines.total}: {exc}",
            {"received": lines.received, "cases": lines.total},
        ) from exc
    lines.restart()
    return failures
