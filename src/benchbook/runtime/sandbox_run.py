"""Running a process in the sandbox (:mod:`benchbook.runtime.sandbox`): start it under bwrap
with its limits applied before the command runs, collect its output, and kill the whole sandbox
at the end."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import os
import select
import shutil
import signal
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchbook.runtime.sandbox_args import bwrap_args
from benchbook.runtime.sandbox_limits import SandboxLimits
from benchbook.runtime.sandbox_policy import NetworkMode, SandboxError, SandboxPolicy
from benchbook.runtime.spawner import (
    Process,
    pid_namespace_of_child,
    spawn,
    wait_group_gone,
    wait_namespace_gone,
)

#: Seconds to wait for the output pipes to close once the sandbox is dead.
_DRAIN_GRACE_S = 2.0
#: Seconds bwrap may take to report its sandbox child (namespace setup; long under load).
_INFO_TIMEOUT_S = 60.0
#: A case's stdin up to this size is written at once and the pipe closed (a pipe holds 64 KiB:
#: one ``write``, no feeding task); a larger one is fed by a task that waits for the reader.
STDIN_AT_ONCE_BYTES = 64 * 1024


@dataclass(frozen=True)
class SandboxResult:
    """A finished (or killed) sandboxed process.

    Attributes:
        exit_code: the exit status; 128+N when killed by signal N inside the sandbox; None
            after a timeout (the sandbox was killed).
        stdout, stderr: the last ``output_limit_bytes`` of each stream.
        timed_out: it ran past ``timeout_s`` and the whole sandbox was killed.
        duration_ms: wall time in milliseconds.
    """

    exit_code: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool
    duration_ms: int


class SandboxedProcess:
    """A process started by :func:`start_sandboxed` (streaming harnesses, the browser).

    ``process`` is the outermost program (bwrap, or the command itself when the sandbox is
    off), started off the event loop (:mod:`.spawner`; used like an asyncio process);
    :meth:`kill` ends the whole sandbox.
    """

    def __init__(self, process: Process, sandboxed: bool) -> None:
        self.process = process
        self.sandboxed = sandboxed

    @property
    def pid(self) -> int:
        """The outermost process id (bwrap's; also the process group id)."""
        return self.process.pid

    def kill_now(self) -> None:
        """SIGKILL the sandbox's process group: bwrap dies, so does its PID namespace."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)

    async def kill(self) -> None:
        """Kill everything the process started, reap it and wait until the whole sandbox is
        gone (no-op when it already ended): its process group and, sandboxed, every process of
        its PID namespace (read before the kill: bwrap's child is its init)."""
        namespace = pid_namespace_of_child(self.process.pid) if self.sandboxed else None
        self.kill_now()
        await self.process.wait()
        await wait_group_gone(self.process.pid, _DRAIN_GRACE_S)
        if namespace is not None:
            await wait_namespace_gone(namespace, _DRAIN_GRACE_S)


async def start_sandboxed(
    argv: Sequence[str],
    *,
    policy: SandboxPolicy,
    cwd: Path,
    env: Mapping[str, str],
    writable: Sequence[Path] = (),
    readable: Sequence[Path] = (),
    network: NetworkMode = "none",
    limits: SandboxLimits | None = None,
    stdin: int | None = asyncio.subprocess.DEVNULL,
    stdout: int | None = asyncio.subprocess.PIPE,
    stderr: int | None = asyncio.subprocess.PIPE,
) -> SandboxedProcess:
    """Start ``argv`` in a sandbox and return at once (the caller reads, waits and kills).

    Args:
        argv: the program (found on ``env["PATH"]`` inside the sandbox) and its arguments.
        policy: the installation's sandbox.
        cwd: the working directory (must be visible inside: usually the workdir).
        env: the process's whole environment (nothing of the server's is added).
        writable: paths bound read-write at their own path (the case's workdir).
        readable: extra paths bound read-only at their own path.
        network: ``none`` (default) or ``full``.
        limits: resource limits; default ``policy.limits``.
        stdin, stdout, stderr: as for :func:`asyncio.create_subprocess_exec` (a file object's
            descriptor is accepted).

    Raises:
        SandboxUnavailable: the sandbox is on and bwrap is missing.
        SandboxError: a denied path was asked for, or the limits could not be applied.
        OSError: the program is missing or not executable (checked with ``env["PATH"]``
            before the sandbox is built), or bwrap could not be started.
    """
    _check_program(argv, env, cwd)
    if not policy.enabled:  # a new session all the same: one killpg ends it all
        process = await spawn(argv, cwd=cwd, env=env, stdin=stdin, stdout=stdout, stderr=stderr)
        return SandboxedProcess(process, sandboxed=False)
    args = bwrap_args(argv, policy, cwd, writable, readable, network)
    gate = _Gate(limits or policy.limits)
    try:
        process = await spawn(
            [policy.bwrap, "--info-fd", str(gate.info_w), "--block-fd", str(gate.block_r),
             *args],
            cwd=cwd, env=env, stdin=stdin, stdout=stdout, stderr=stderr,
            pass_fds=(gate.info_w, gate.block_r), on_start=gate.release,
        )  # fmt: skip
    finally:
        gate.close()  # the start thread is done: spawn returns or raises only after it
    proc = SandboxedProcess(process, sandboxed=True)
    if process.start_error is not None:
        await proc.kill()
        raise process.start_error
    return proc


class _Gate:
    """bwrap's ``--info-fd`` and ``--block-fd`` pipes for one start: in the start thread, right
    after bwrap started (:func:`.spawner.spawn`'s ``on_start``), the limits are applied to its
    sandbox child before the command may run — no round trip through the event loop."""

    def __init__(self, limits: SandboxLimits) -> None:
        self.limits = limits
        self.info_r, self.info_w = os.pipe()
        self.block_r, self.block_w = os.pipe()

    def release(self, pid: int) -> None:
        """Close bwrap's ends here (so its death reads as EOF), then :func:`_limit_and_release`.

        Raises:
            SandboxError: the child's pid never came, or the kernel refused a limit.
        """
        self._close("info_w", "block_r")
        _limit_and_release(self.info_r, self.block_w, self.limits)

    def close(self) -> None:
        """Close whatever is still open (idempotent)."""
        self._close("info_r", "info_w", "block_r", "block_w")

    def _close(self, *names: str) -> None:
        for name in names:
            fd = getattr(self, name)
            if fd >= 0:
                setattr(self, name, -1)
                with contextlib.suppress(OSError):
                    os.close(fd)


def _limit_and_release(info_fd: int, block_fd: int, limits: SandboxLimits) -> None:
    """Apply ``limits`` to bwrap's sandbox child (pid from ``--info-fd``), then let it run the
    command (a byte on ``--block-fd``). bwrap gone before it reported: nothing to limit, its
    exit status says why. Blocks (a start thread).

    Raises:
        SandboxError: the child's pid never came, or the kernel refused a limit.
    """
    info = _read_json(info_fd, _INFO_TIMEOUT_S)
    child = info.get("child-pid") if info else None
    if not isinstance(child, int):
        return
    try:
        limits.apply(child)
    except OSError as exc:
        raise SandboxError(f"cannot apply the sandbox's resource limits: {exc}") from exc
    os.write(block_fd, b"1")


def _read_json(fd: int, timeout_s: float) -> dict[str, object] | None:
    """The JSON object bwrap writes on ``fd`` (None when it closes the pipe without one).

    Raises:
        SandboxError: nothing within ``timeout_s``.
    """
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    deadline = time.monotonic() + timeout_s
    data = bytearray()
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise SandboxError(f"bwrap reported no sandbox within {timeout_s:g} s")
        if not poller.poll(remaining * 1000):
            continue
        chunk = os.read(fd, 4096)
        data.extend(chunk)
        if not chunk or b"}" in chunk:
            break
    try:
        value = json.loads(bytes(data))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _check_program(argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> None:
    """Raise the OSError an unsandboxed start would: inside bwrap a missing program is only an
    exit status, and callers say ``cannot start <program>: <reason>``."""
    if not argv:
        raise SandboxError("nothing to run: the command is empty")
    program = argv[0]
    if "/" in program:
        found: str | None = str(cwd / program)
        assert found is not None
        if not os.path.exists(found):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)
        if not os.access(found, os.X_OK) or os.path.isdir(found):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), program)
        return
    if shutil.which(program, path=env.get("PATH", os.defpath)) is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)


async def _read_tail(stream: asyncio.StreamReader | None, limit_bytes: int) -> bytes:
    """Everything ``stream`` yields until EOF, keeping the last ``limit_bytes``."""
    if stream is None:
        return b""
    buffer = bytearray()
    while chunk := await stream.read(65536):
        buffer += chunk
        if len(buffer) > 2 * limit_bytes:  # trim in batches: one copy per limit, not per chunk
            del buffer[:-limit_bytes]
    return bytes(buffer[-limit_bytes:])


async def feed_stdin(writer: asyncio.StreamWriter | None, data: bytes) -> None:
    """Write ``data`` to stdin and close it; a process that never reads stdin is fine."""
    if writer is None:
        return
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        writer.write(data)
        await writer.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        writer.close()


def write_stdin_at_once(writer: asyncio.StreamWriter | None, data: bytes) -> None:
    """Write ``data`` to stdin and close it, without waiting: the pipe takes up to 64 KiB at
    once, and the transport sends any rest as the process reads, then closes the pipe (no
    flow control: for small inputs, :data:`STDIN_AT_ONCE_BYTES`). A process that never reads
    stdin is fine."""
    if writer is None:
        return
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        if data:
            writer.write(data)
        writer.close()


async def run_sandboxed(
    argv: Sequence[str],
    *,
    policy: SandboxPolicy,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    writable: Sequence[Path] = (),
    readable: Sequence[Path] = (),
    network: NetworkMode = "none",
    limits: SandboxLimits | None = None,
    stdin: bytes | None = None,
    output_limit_bytes: int = 16 * 1024 * 1024,
) -> SandboxResult:
    """Run ``argv`` in a sandbox to its end (or ``timeout_s``) and collect its output.

    Arguments as for :func:`start_sandboxed`; ``stdin`` is fed and closed (None: no stdin);
    each stream keeps its last ``output_limit_bytes``. Whatever happens — normal exit, timeout,
    cancellation — the whole sandbox is killed before this returns, so nothing the command
    started outlives it.

    Raises:
        SandboxUnavailable, SandboxError, OSError: as :func:`start_sandboxed`; nothing else
        (a timeout is ``SandboxResult.timed_out``).
    """
    started = time.monotonic()
    proc = await start_sandboxed(
        argv, policy=policy, cwd=cwd, env=env, writable=writable, readable=readable,
        network=network, limits=limits,
        stdin=asyncio.subprocess.DEVNULL if stdin is None else asyncio.subprocess.PIPE,
    )  # fmt: skip
    process = proc.process
    out_task = asyncio.ensure_future(_read_tail(process.stdout, output_limit_bytes))
    err_task = asyncio.ensure_future(_read_tail(process.stderr, output_limit_bytes))
    # Per case, one task fewer each: a small stdin is written at once rather than by a task,
    # and ``asyncio.timeout`` bounds the wait where ``wait_for`` wrapped it in a task.
    feed_task = None
    if stdin is not None and len(stdin) > STDIN_AT_ONCE_BYTES:
        feed_task = asyncio.ensure_future(feed_stdin(process.stdin, stdin))
    else:
        write_stdin_at_once(process.stdin, stdin or b"")
    returncode: int | None = None
    try:
        async with asyncio.timeout(timeout_s):
            returncode = await process.wait()
    except TimeoutError:
        pass
    finally:
        # Timeout, cancellation and a normal exit alike: nothing may outlive the command.
        proc.kill_now()
        if returncode is None:
            await process.wait()
        if feed_task is not None:
            feed_task.cancel()
    await wait_group_gone(process.pid, _DRAIN_GRACE_S)
    done, pending = await asyncio.wait({out_task, err_task}, timeout=_DRAIN_GRACE_S)
    for task in pending:  # unsandboxed: a process that left the group may still hold a pipe
        task.cancel()
    return SandboxResult(
        exit_code=returncode,
        stdout=out_task.result() if out_task in done else b"",
        stderr=err_task.result() if err_task in done else b"",
        timed_out=returncode is None,
        duration_ms=round((time.monotonic() - started) * 1000),
    )
