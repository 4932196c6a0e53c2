"""Starting a process off the event loop (issue 32; measured by ``bench/command_run.py``).

``asyncio.create_subprocess_exec`` forks and execs on the event loop's thread, and waits for
each process's exit in a thread of its own: while one case's bwrap was being started, no other
case moved, so the starts of concurrent cases ran one after another. :func:`spawn` runs the same
``subprocess.Popen`` (same ``cwd``, environment, standard streams, ``close_fds``,
``pass_fds``, a new session) in a small pool of threads, so starts overlap each other and the
loop; the exit is awaited on the loop through a pidfd (a waiting thread where the kernel has
none), and the pipes become asyncio streams, as with asyncio's own processes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

#: Threads that start processes (each start blocks its thread for the fork and exec only).
SPAWN_THREADS = 4
#: Buffer limit of the output streams (asyncio's default for subprocess pipes).
_STREAM_LIMIT = 2**16

_POOL_LOCK = threading.Lock()
_POOL: list[ThreadPoolExecutor] = []

_Done = Callable[[int], None]


def _pool() -> ThreadPoolExecutor:
    """The process's start threads (made on first use; a forked child makes its own)."""
    with _POOL_LOCK:
        if not _POOL:
            _POOL.append(ThreadPoolExecutor(SPAWN_THREADS, thread_name_prefix="benchbook-spawn"))
        return _POOL[0]


os.register_at_fork(after_in_child=_POOL.clear)


class Process:
    """A process started by :func:`spawn`: what Benchbook uses of
    :class:`asyncio.subprocess.Process` (``pid``, ``returncode``, the ``stdin`` writer, the
    ``stdout``/``stderr`` readers, :meth:`wait`). The process leads its own process group
    (``pgid == pid``)."""

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        stdin: asyncio.StreamWriter | None,
        stdout: asyncio.StreamReader | None,
        stderr: asyncio.StreamReader | None,
    ) -> None:
        self._popen = popen
        self.pid = popen.pid
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr
        loop = asyncio.get_running_loop()
        self._exited: asyncio.Future[int] = loop.create_future()
        _watch(popen, loop, self._exit)

    @property
    def returncode(self) -> int | None:
        """The exit status once the loop has seen the exit (``-N``: killed by signal N)."""
        return self._popen.returncode if self._exited.done() else None

    async def wait(self) -> int:
        """Wait for the process to exit and return its :attr:`returncode` (cancelling the
        wait leaves the process alone)."""
        return await asyncio.shield(self._exited)

    def _exit(self, code: int) -> None:
        if not self._exited.done():
            self._exited.set_result(code)


def _watch(popen: subprocess.Popen[bytes], loop: asyncio.AbstractEventLoop, done: _Done) -> None:
    """Call ``done(returncode)`` on ``loop`` once ``popen`` has exited (and is reaped)."""
    try:
        pidfd = os.pidfd_open(popen.pid)
    except (AttributeError, OSError):  # no pidfd (not Linux, kernel before 5.3)
        _wait_in_thread(popen, loop, done)
        return

    def readable() -> None:
        loop.remove_reader(pidfd)
        os.close(pidfd)
        code = popen.poll()
        if code is None:  # not reaped yet (never expected once the pidfd is readable)
            _wait_in_thread(popen, loop, done)
        else:
            done(code)

    loop.add_reader(pidfd, readable)


def _wait_in_thread(
    popen: subprocess.Popen[bytes], loop: asyncio.AbstractEventLoop, done: _Done
) -> None:
    def wait() -> None:
        code = popen.wait()
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            loop.call_soon_threadsafe(done, code)

    threading.Thread(target=wait, name=f"benchbook-wait-{popen.pid}", daemon=True).start()


async def spawn(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    stdin: int | None = None,
    stdout: int | None = None,
    stderr: int | None = None,
    pass_fds: Sequence[int] = (),
) -> Process:
    """Start ``argv`` in a new session (its own process group) from a start thread.

    Args:
        argv: the program (a path, or a name found on the server's ``PATH``) and arguments.
        cwd: the working directory. env: the whole environment.
        stdin, stdout, stderr: as for :func:`asyncio.create_subprocess_exec` (``PIPE``,
            ``DEVNULL``, ``STDOUT`` for stderr, a descriptor, or None: this process's).
        pass_fds: descriptors the process inherits (all others are closed in it).

    Cancelled while the start thread runs, this waits for that start (a fork and an exec)
    to finish, kills what it started, then lets the cancellation go on.

    Raises:
        OSError: the program could not be started (missing, not executable, bad ``cwd``).
    """
    loop = asyncio.get_running_loop()

    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env),
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            pass_fds=tuple(pass_fds),
            close_fds=True,
            start_new_session=True,
            bufsize=0,
        )

    popen = await _started(loop.run_in_executor(_pool(), start))
    try:
        writer = await _writer(loop, popen.stdin)
        out = await _reader(loop, popen.stdout)
        err = await _reader(loop, popen.stderr)
    except BaseException:
        _discard(popen)
        raise
    return Process(popen, writer, out, err)


async def _started(future: asyncio.Future[subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
    """The started process; on cancellation, wait for the start, discard it, re-raise."""
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        while not future.done():  # milliseconds: the start thread only forks and execs
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait([future])
        if not future.cancelled() and future.exception() is None:
            _discard(future.result())
        raise


def _discard(popen: subprocess.Popen[bytes]) -> None:
    """Kill a process nobody will use (its whole group), close its pipes, reap it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(popen.pid, signal.SIGKILL)
    for pipe in (popen.stdin, popen.stdout, popen.stderr):
        if pipe is not None:
            pipe.close()
    _pool().submit(popen.wait)


async def _writer(loop: asyncio.AbstractEventLoop, pipe: object) -> asyncio.StreamWriter | None:
    if pipe is None:
        return None
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader(loop=loop), loop=loop), pipe
    )
    return asyncio.StreamWriter(transport, protocol, None, loop)


async def _reader(loop: asyncio.AbstractEventLoop, pipe: object) -> asyncio.StreamReader | None:
    if pipe is None:
        return None
    reader = asyncio.StreamReader(limit=_STREAM_LIMIT, loop=loop)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader, loop=loop), pipe)
    return reader
