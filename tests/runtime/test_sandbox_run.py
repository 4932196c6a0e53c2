"""A sandboxed process's stdin: written at once up to 64 KiB, streamed beyond; the timeout
(``runtime/sandbox_run.py``)."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest

from benchbook.runtime.sandbox_policy import SandboxPolicy
from benchbook.runtime.sandbox_run import STDIN_AT_ONCE_BYTES, SandboxResult, run_sandboxed

SANDBOX = [
    pytest.param(False, id="sandbox-off"),
    pytest.param(
        True,
        id="sandbox-on",
        marks=pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap is not installed"),
    ),
]


def _run(
    tmp_path: Path, sandbox: bool, argv: list[str], stdin: bytes, timeout_s: float = 30.0
) -> SandboxResult:
    env = {"PATH": os.environ.get("PATH", os.defpath), "LANG": "C.UTF-8"}
    return asyncio.run(
        run_sandboxed(
            argv,
            policy=SandboxPolicy(enabled=sandbox),
            cwd=tmp_path,
            env=env,
            timeout_s=timeout_s,
            writable=[tmp_path],
            stdin=stdin,
        )
    )


@pytest.mark.parametrize("sandbox", SANDBOX)
@pytest.mark.parametrize("size_bytes", [STDIN_AT_ONCE_BYTES, 100 * 1024, 1024 * 1024])
def test_cat_returns_its_stdin_byte_for_byte(
    tmp_path: Path, sandbox: bool, size_bytes: int
) -> None:
    """64 KiB: written at once; 100 KiB and 1 MiB: fed as cat reads (more than a pipe holds)."""
    data = (os.urandom(251) * (size_bytes // 251 + 1))[:size_bytes]
    result = _run(tmp_path, sandbox, ["cat"], data)
    assert result.exit_code == 0 and not result.timed_out
    assert len(result.stdout) == size_bytes and result.stdout == data


@pytest.mark.parametrize("size_bytes", [10, 1024 * 1024])
def test_a_process_that_never_reads_its_stdin_still_ends(tmp_path: Path, size_bytes: int) -> None:
    result = _run(tmp_path, False, ["true"], b"x" * size_bytes)
    assert result.exit_code == 0 and not result.timed_out


def test_a_process_past_its_timeout_is_killed(tmp_path: Path) -> None:
    result = _run(tmp_path, False, ["sleep", "30"], b"", timeout_s=0.3)
    assert result.timed_out and result.exit_code is None
    assert result.duration_ms < 10_000
