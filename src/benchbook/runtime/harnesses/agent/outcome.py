"""What one agent tool call gives back: :class:`ToolOutcome`.

A leaf of :mod:`benchbook.runtime.harnesses.agent`: :mod:`.tools` (every tool) and :mod:`.browser`
(the ``browser`` tool) both build outcomes, and :mod:`.tools` dispatches to :mod:`.browser`, so the
type lives apart from both.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ToolOutcome:
    """One tool call's result: the text the model reads, and what the trace keeps.

    Attributes:
        ok: the tool did what was asked (exit code 0 for bash/python).
        content: the ``tool`` message's text.
        exit_code: the process's exit status (bash, python); None otherwise or when killed.
        timed_out: the process was killed at its timeout.
        output_bytes, cut_bytes: bytes the process wrote, and bytes the model does not see.
        duration_ms: wall time.
    """

    ok: bool
    content: str
    exit_code: int | None = None
    timed_out: bool = False
    output_bytes: int = 0
    cut_bytes: int = 0
    duration_ms: int = 0
