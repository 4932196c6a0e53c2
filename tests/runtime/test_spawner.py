"""Process starts off the event loop (issue 32): :mod:`benchbook.runtime.spawner` behaves like
``asyncio.create_subprocess_exec`` with a new session — streams, exit status, descriptors,
cancellation."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sys
from pathlib import Path

import pytest

from benchbook.runtime import spawner
from benchbook.runtime.spawner import spawn
from tests.procscan import wait_gone

ENV = {"PATH": os.environ.get("PATH", os.defpath)}
PIPE, STDOUT = asyncio.subprocess.PIPE, asyncio.subprocess.STDOUT


def test_streams_exit_status_and_own_session(tmp_path: Path) -> None:
    """stdin is fed, stdout and stderr are read (or merged), the exit status comes back, and
    the process leads its own session and process group."""

    async def main() -> tuple[bytes, bytes, int, int | None, int | None]:
        code = (
            "import os, sys; data = sys.stdin.read(); print(data.upper());"
            " print(os.getsid(0) == os.getpid() == os.getpgid(0), file=sys.stderr); sys.exit(3)"
        )
        proc = await spawn(
            [sys.executable, "-c", code], cwd=tmp_path, env=ENV, stdin=PIPE, stdout=PIPE,
            stderr=PIPE,
        )  # fmt: skip
        before = proc.returncode
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdin.write(b"hello")
        await proc.stdin.drain()
        proc.stdin.close()
        out, err = await asyncio.gather(proc.stdout.read(), proc.stderr.read())
        return out, err, await proc.wait(), before, proc.returncode

    out, err, code, before, after = asyncio.run(main())
    assert (out, err, code, before, after) == (b"HELLO\n", b"True\n", 3, None, 3)


def test_merged_stderr_cwd_and_environment(tmp_path: Path) -> None:
    """``stderr=STDOUT`` merges, ``cwd`` and the environment are exactly as given."""

    async def main() -> bytes:
        code = "import os, sys; print(os.getcwd(), sorted(os.environ), flush=True);"
        code += " print('e', file=sys.stderr)"
        proc = await spawn([sys.executable, "-c", code], cwd=tmp_path, env={**ENV, "ONLY": "1"},
                           stdout=PIPE, stderr=STDOUT)  # fmt: skip
        assert proc.stdout is not None and proc.stderr is None and proc.stdin is None
        out = await proc.stdout.read()
        await proc.wait()
        return out

    lines = asyncio.run(main()).decode().splitlines()
    assert lines[0].split(" ", 1)[0] == str(tmp_path)
    assert "ONLY" in lines[0] and "HOME" not in lines[0]
    assert lines[1] == "e"


def test_only_passed_descriptors_are_inherited(tmp_path: Path) -> None:
    """An inheritable descriptor of the server that is not in ``pass_fds`` is closed in the
    process; one that is passed is open."""
    kept_r, kept_w = os.pipe()
    leaked_r, leaked_w = os.pipe()
    os.set_inheritable(leaked_w, True)

    async def fds(passed: tuple[int, ...]) -> list[int]:
        code = "import os; print(sorted(int(n) for n in os.listdir('/proc/self/fd')))"
        proc = await spawn([sys.executable, "-c", code], cwd=tmp_path, env=ENV, stdout=PIPE,
                           pass_fds=passed)  # fmt: skip
        assert proc.stdout is not None
        out = await proc.stdout.read()
        await proc.wait()
        return [int(n) for n in out.decode().strip("[]\n").split(", ")]

    async def main() -> tuple[list[int], list[int]]:
        return await fds((kept_w,)), await fds(())

    try:
        passed, none = asyncio.run(main())
    finally:
        for fd in (kept_r, kept_w, leaked_r, leaked_w):
            os.close(fd)
    assert kept_w in passed and kept_w not in none
    assert leaked_w not in passed and leaked_w not in none and kept_r not in passed


def test_killed_process_reports_the_signal(tmp_path: Path) -> None:
    """SIGKILL of the group: ``wait`` returns ``-9``, like asyncio's processes."""

    async def main() -> int:
        proc = await spawn(["sleep", "30"], cwd=tmp_path, env=ENV)
        os.killpg(proc.pid, signal.SIGKILL)
        return await asyncio.wait_for(proc.wait(), 30)

    assert asyncio.run(main()) == -signal.SIGKILL


def test_exit_is_seen_without_pidfd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the kernel has no pidfd, a waiting thread reports the exit."""

    def no_pidfd(pid: int) -> int:
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(spawner.os, "pidfd_open", no_pidfd)

    async def main() -> int:
        proc = await spawn(["sh", "-c", "exit 7"], cwd=tmp_path, env=ENV)
        return await asyncio.wait_for(proc.wait(), 30)

    assert asyncio.run(main()) == 7


def test_missing_program_raises_oserror(tmp_path: Path) -> None:
    async def main() -> None:
        await spawn([str(tmp_path / "nope")], cwd=tmp_path, env=ENV)

    with pytest.raises(FileNotFoundError):
        asyncio.run(main())


def test_cancelled_start_leaves_no_process(tmp_path: Path) -> None:
    """Cancelled while its start thread runs, ``spawn`` kills what started: no process is
    left running, and none was handed out."""
    marker = f"59.{random.randrange(10**8):08d}"  # sleep's argument: unique to this test

    async def main() -> None:
        task = asyncio.ensure_future(spawn(["sleep", marker], cwd=tmp_path, env=ENV))
        await asyncio.sleep(0)  # the start is in its thread now
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert wait_gone(marker, 10) == []


def test_on_start_runs_in_the_start_thread_and_its_error_is_kept(tmp_path: Path) -> None:
    """``on_start`` gets the pid before ``spawn`` returns (the sandbox applies its limits
    there); what it raises comes back as ``start_error`` with the process, for the caller
    to end."""
    seen: list[int] = []

    def refuse(pid: int) -> None:
        seen.append(pid)
        raise RuntimeError("limits refused")

    async def main() -> tuple[int, str, int]:
        proc = await spawn(["sleep", "30"], cwd=tmp_path, env=ENV, on_start=refuse)
        error = repr(proc.start_error)
        os.killpg(proc.pid, signal.SIGKILL)
        return proc.pid, error, await asyncio.wait_for(proc.wait(), 30)

    pid, error, code = asyncio.run(main())
    assert seen == [pid] and error == "RuntimeError('limits refused')" and code == -9
