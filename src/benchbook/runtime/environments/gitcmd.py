"""Git as the runtime runs it: a clean, fixed environment and a cross-process mirror lock.

Every git command runs with no user or system configuration (``GIT_CONFIG_GLOBAL=/dev/null``,
``GIT_CONFIG_NOSYSTEM=1``), no hooks (``core.hooksPath=/dev/null``), no fsmonitor, no terminal
prompt (a private repository fails instead of hanging) and a fixed identity and date, so a
repository committed from the same files always has the same commit id.

Once case code has run in a working copy (a setup line, the harness) its ``.git/config`` is the
case's: a filter or diff driver there is a command. Git commands on such a working copy are
therefore run in the case's sandbox (``git(..., sandbox=policy, writable=[...])``), never with
the server's identity.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import signal
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from pathlib import Path

from benchbook.runtime.sandbox import SandboxError, SandboxPolicy, run_sandboxed

#: Seconds one git command may run (a mirror clone of a large repository included).
GIT_TIMEOUT_S = 1800.0
#: Bytes of a sandboxed git command's stdout kept (a diff is returned whole below this).
_GIT_OUTPUT_LIMIT_BYTES = 1 << 30

_IDENTITY = {
    "GIT_AUTHOR_NAME": "Benchbook",
    "GIT_AUTHOR_EMAIL": "benchbook@localhost",
    "GIT_COMMITTER_NAME": "Benchbook",
    "GIT_COMMITTER_EMAIL": "benchbook@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
}
_CONFIG = [
    "-c", "init.defaultBranch=main", "-c", "advice.detachedHead=false",
    "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
]  # fmt: skip


class GitError(Exception):
    """A git command failed; the message is the command and the tail of its stderr."""


def tail(text: str, max_chars: int) -> str:
    """The last ``max_chars`` characters of ``text``, stripped."""
    return text[-max_chars:].strip()


def kill_group(pgid: int) -> None:
    """SIGKILL every process of group ``pgid`` (no-op when it is gone)."""
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def git_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The fixed environment git runs with (see the module docstring), plus ``extra``."""
    env = {
        # PATH is the server's own: git and its helpers (git-remote-http) must be found.
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": "/nonexistent",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        **_IDENTITY,
    }
    env.update(extra or {})
    return env


async def git(
    args: list[str],
    cwd: Path,
    *,
    env: Mapping[str, str] | None = None,
    timeout_s: float = GIT_TIMEOUT_S,
    stdin: bytes | None = None,
    sandbox: SandboxPolicy | None = None,
    writable: Sequence[Path] = (),
    config: Sequence[str] = (),
) -> str:
    """Run ``git <args>`` in ``cwd`` (``stdin`` fed to it when given); its stdout as text
    (invalid UTF-8 replaced). With ``sandbox``, git runs inside it (no network; ``writable``
    the only writable paths): for working copies case code has touched. ``config`` is more
    ``-c key=value`` options (a network clone's egress rules, ``git_egress``).

    Raises:
        GitError: non-zero exit, timeout, git not startable, or the sandbox refused; names the
            subcommand.
    """
    if sandbox is not None:
        return await _sandboxed_git(args, cwd, env, timeout_s, stdin, sandbox, writable)
    try:
        proc = await asyncio.create_subprocess_exec(
            "git",
            *_CONFIG,
            *config,
            *args,
            cwd=cwd,
            env=git_env(env),
            stdin=asyncio.subprocess.DEVNULL if stdin is None else asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        raise GitError(f"git {args[0]}: {exc}") from exc
    try:
        stdout, stderr = await asyncio.wait_for(proc.communicate(stdin), timeout_s)
    except TimeoutError:
        kill_group(proc.pid)
        await proc.wait()
        raise GitError(f"git {args[0]}: timed out after {timeout_s:g} s") from None
    except BaseException:  # cancelled: a clone must not go on in the background
        kill_group(proc.pid)
        raise
    if proc.returncode != 0:
        message = tail(stderr.decode("utf-8", "replace"), 1000)
        raise GitError(f"git {args[0]} exited {proc.returncode}: {message}")
    return stdout.decode("utf-8", "replace")


async def _sandboxed_git(
    args: list[str],
    cwd: Path,
    env: Mapping[str, str] | None,
    timeout_s: float,
    stdin: bytes | None,
    sandbox: SandboxPolicy,
    writable: Sequence[Path],
) -> str:
    try:
        done = await run_sandboxed(
            ["git", *_CONFIG, *args],
            policy=sandbox,
            cwd=cwd,
            env=git_env(env),
            timeout_s=timeout_s,
            writable=writable,
            stdin=stdin,
            output_limit_bytes=_GIT_OUTPUT_LIMIT_BYTES,
        )
    except (OSError, SandboxError) as exc:
        raise GitError(f"git {args[0]}: {exc}") from exc
    if done.timed_out:
        raise GitError(f"git {args[0]}: timed out after {timeout_s:g} s")
    if done.exit_code != 0:
        message = tail(done.stderr.decode("utf-8", "replace"), 1000)
        raise GitError(f"git {args[0]} exited {done.exit_code}: {message}")
    return done.stdout.decode("utf-8", "replace")


@asynccontextmanager
async def mirror_lock(mirror: Path) -> AsyncIterator[None]:
    """Hold an exclusive ``fcntl`` lock on ``<mirror>.lock`` (other processes' cases).

    Waits in a thread, so the event loop keeps running while another process holds the lock.
    """
    mirror.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(mirror.with_name(mirror.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        await asyncio.to_thread(fcntl.flock, fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
