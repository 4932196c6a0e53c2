"""Where an agent's tool starts a process: the case's sandbox, always (DESIGN "Trust boundaries").

:func:`run_tool_process` is the only place this package starts a process; it goes through
:func:`benchbook.runtime.sandbox.start_sandboxed` with the case's workdir as the only writable
path, the tools' network mode, and a clean environment (``PATH``, ``HOME`` = the workdir,
``LANG``, the workspace's variables such as ``BENCHBOOK_CDP_URL`` — no secret, nothing else of
the server's). stdout and stderr are read as one stream, and only the first and last parts of it
are kept (:class:`HeadTail`): a tool printing 100 MB costs the server ``limit_bytes`` of memory,
not 100 MB, and the model is told how much was cut.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from benchbook.runtime.environments import Workspace
from benchbook.runtime.sandbox import SandboxLimits, start_sandboxed
from benchbook.runtime.sandbox_run import feed_stdin

#: Seconds to wait for the output pipe to close once the sandbox is dead.
_DRAIN_GRACE_S = 2.0
_CHUNK_BYTES = 65536


class HeadTail:
    """The first and last bytes of a stream of unknown length, in bounded memory.

    ``limit_bytes`` is split in half: the head keeps the first half, the tail the last half;
    everything in between is counted, not kept.
    """

    def __init__(self, limit_bytes: int) -> None:
        self.head_limit = limit_bytes // 2
        self.tail_limit = limit_bytes - self.head_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total_bytes = 0

    def feed(self, chunk: bytes) -> None:
        """Add the next ``chunk`` of the stream."""
        self.total_bytes += len(chunk)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > 2 * self.tail_limit:  # trim in batches, not per chunk
                del self.tail[: -self.tail_limit]

    @property
    def cut_bytes(self) -> int:
        """Bytes of the stream that are not kept (0 when it fit)."""
        return max(0, self.total_bytes - len(self.head) - min(len(self.tail), self.tail_limit))

    def text(self) -> str:
        """Head and tail as UTF-8 (invalid bytes replaced), with ``[… N bytes cut …]`` between
        them when the stream did not fit."""
        tail = bytes(self.tail[-self.tail_limit :]) if self.tail_limit else b""
        head = bytes(self.head).decode("utf-8", "replace")
        if not self.cut_bytes:
            return head + tail.decode("utf-8", "replace")
        marker = (
            f"\n[… output cut: {self.cut_bytes:,} of {self.total_bytes:,} bytes not shown; "
            "the first and last parts are kept …]\n"
        )
        return head + marker + tail.decode("utf-8", "replace")


@dataclass(frozen=True)
class ToolRun:
    """One finished (or killed) tool process.

    Attributes:
        exit_code: the exit status; None when it was killed at its timeout.
        output: stdout and stderr interleaved, cut to head and tail (:meth:`HeadTail.text`).
        output_bytes: how many bytes the process wrote in all.
        cut_bytes: how many of them the model does not see.
        timed_out: it ran past its timeout and the whole sandbox was killed.
        duration_ms: wall time in milliseconds.
    """

    exit_code: int | None
    output: str
    output_bytes: int
    cut_bytes: int
    timed_out: bool
    duration_ms: int


def tool_environment(workspace: Workspace) -> dict[str, str]:
    """The whole environment of a tool process (module docstring)."""
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(workspace.workdir),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
    }
    env.update(workspace.env_vars)
    return env


async def _drain(stream: asyncio.StreamReader | None, keep: HeadTail) -> None:
    if stream is None:
        return
    while chunk := await stream.read(_CHUNK_BYTES):
        keep.feed(chunk)


async def run_tool_process(
    argv: Sequence[str],
    workspace: Workspace,
    *,
    stdin: bytes,
    timeout_s: float,
    limit_bytes: int,
    limits: SandboxLimits | None = None,
    network: Literal["none", "full"] = "none",
) -> ToolRun:
    """Run ``argv`` in the case's sandbox (``workspace.sandbox``), in its workdir, to its end
    or ``timeout_s``; ``limits``: the case's resource limits (default: the policy's).

    Whatever happens — exit, timeout, cancellation — the sandbox is killed before this returns.

    Raises:
        SandboxUnavailable, SandboxError: the sandbox cannot start it (the caller reports it).
        OSError: the program could not be started.
    """
    started = time.monotonic()
    workdir = workspace.workdir.resolve()
    proc = await start_sandboxed(
        argv,
        policy=workspace.sandbox,
        cwd=workdir,
        env=tool_environment(workspace),
        writable=[workdir],
        network=network,
        limits=limits,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    keep = HeadTail(limit_bytes)
    process = proc.process
    reader = asyncio.ensure_future(_drain(process.stdout, keep))
    feeder = asyncio.ensure_future(feed_stdin(process.stdin, stdin))
    exit_code: int | None = None
    try:
        exit_code = await asyncio.wait_for(process.wait(), max(timeout_s, 0.001))
    except TimeoutError:
        pass
    finally:
        proc.kill_now()  # nothing the tool started outlives the call
        if exit_code is None:
            await process.wait()
        feeder.cancel()
        with contextlib.suppress(TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(reader, _DRAIN_GRACE_S)
    return ToolRun(
        exit_code=exit_code,
        output=keep.text(),
        output_bytes=keep.total_bytes,
        cut_bytes=keep.cut_bytes,
        timed_out=exit_code is None,
        duration_ms=round((time.monotonic() - started) * 1000),
    )
