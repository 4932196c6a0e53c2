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
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

#: Threads that start processes (each start blocks its thread for the fork and exec, and
#: for bwrap to report its sandbox when ``on_start`` waits for it).
SPAWN_THREADS = 8
#: Seconds a cancelled start waits for what it started to be gone.
_GONE_GRACE_S = 2.0
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
        #: What :func:`spawn`'s ``on_start`` raised (None: it returned, or there was none).
        self.start_error: BaseException | None = None
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
    on_start: Callable[[int], None] | None = None,
) -> Process:
    """Start ``argv`` in a new session (its own process group) from a start thread.

    Args:
        argv: the program (a path, or a name found on the server's ``PATH``) and arguments.
        cwd: the working directory. env: the whole environment.
        stdin, stdout, stderr: as for :func:`asyncio.create_subprocess_exec` (``PIPE``,
            ``DEVNULL``, ``STDOUT`` for stderr, a descriptor, or None: this process's).
        pass_fds: descriptors the process inherits (all others are closed in it).
        on_start: called in the start thread with the pid once the process started (the
            sandbox applies its limits there); what it raises becomes
            :attr:`Process.start_error` — the process is returned all the same, for the
            caller to end.

    Cancelled while the start thread runs, this kills what started (at once when the process
    exists, so a waiting ``on_start`` returns), waits for the thread, then lets the
    cancellation go on.

    Raises:
        OSError: the program could not be started (missing, not executable, bad ``cwd``).
    """
    loop = asyncio.get_running_loop()
    started: list[subprocess.Popen[bytes]] = []

    def start() -> tuple[subprocess.Popen[bytes], BaseException | None]:
        popen = subprocess.Popen(
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
        started.append(popen)
        try:
            if on_start is not None:
                on_start(popen.pid)
        except Exception as exc:  # the caller decides (it ends the process)
            return popen, exc
        return popen, None

    popen, error = await _started(loop.run_in_executor(_pool(), start), started)
    try:
        writer = await _writer(loop, popen.stdin)
        out = await _reader(loop, popen.stdout)
        err = await _reader(loop, popen.stderr)
    except BaseException:
        _discard(popen)
        raise
    process = Process(popen, writer, out, err)
    process.start_error = error
    return process


_Started = tuple[subprocess.Popen[bytes], BaseException | None]


async def _started(
    future: asyncio.Future[_Started], started: list[subprocess.Popen[bytes]]
) -> _Started:
    """The start thread's result; on cancellation, kill what started, wait for the thread,
    discard the process, re-raise."""
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        if started:
            _kill_group(started[0].pid)
        while not future.done():  # the start thread only forks, execs (and waits for bwrap)
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait([future])
        if not future.cancelled() and future.exception() is None:
            pid = future.result()[0].pid
            _discard(future.result()[0])
            await wait_group_gone(pid, _GONE_GRACE_S)
        raise


def _group_alive(pgid: int) -> bool:
    """Whether a live (not zombie) process of group ``pgid`` is left: an orphaned zombie
    still answers ``killpg(pgid, 0)`` until init reaps it, so ``/proc`` settles it."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    with os.scandir("/proc") as entries:  # closed on the early return too
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != b"Z":
                return True
    return False


async def wait_group_gone(pgid: int, grace_s: float) -> None:
    """Until no live process of group ``pgid`` is left, at most ``grace_s`` seconds: the
    sandbox's PID 1 (in the group) outlives bwrap by the moment the kernel takes to end the
    namespace's processes; unsandboxed, killed orphans are reaped by init a moment later."""
    deadline = time.monotonic() + grace_s
    while _group_alive(pgid) and time.monotonic() < deadline:
        await asyncio.sleep(0.01)


def pid_namespace_of_child(pid: int) -> str | None:
    """The PID namespace (``/proc/N/ns/pid``'s link, e.g. ``pid:[4026532]``) of ``pid``'s first
    child — bwrap's sandbox init — or None when it has none left or it cannot be read."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children", "rb") as children:
            first = children.read().split()
        return os.readlink(f"/proc/{int(first[0])}/ns/pid") if first else None
    except (OSError, ValueError):
        return None


def _namespace_alive(namespace: str) -> bool:
    """Whether a live (not zombie) process of PID namespace ``namespace`` is left."""
    with os.scandir("/proc") as entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                if os.readlink(f"/proc/{entry.name}/ns/pid") != namespace:
                    continue
                with open(f"/proc/{entry.name}/stat", "rb") as stat:
                    state = stat.read().rsplit(b")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if state != b"Z":
                return True
    return False


async def wait_namespace_gone(namespace: str, grace_s: float) -> None:
    """Until no live process of PID namespace ``namespace`` is left, at most ``grace_s``
    seconds. Processes that left bwrap's process group (Chromium's zygote calls ``setsid``)
    are killed by the kernel when the namespace's init dies, but a moment later: until then
    they still hold their sockets (a browser's debugging port kept accepting)."""
    deadline = time.monotonic() + grace_s
    while _namespace_alive(namespace) and time.monotonic() < deadline:
        await asyncio.sleep(0.01)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _discard(popen: subprocess.Popen[bytes]) -> None:
    """Kill a process nobody will use (its whole group), close its pipes, reap it."""
    _kill_group(popen.pid)
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
