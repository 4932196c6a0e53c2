"""The ``command`` harness kind (SPEC H.1): one process per (case, sample).

The process starts in its own session (so its own process group) in a clean environment: only
``PATH``, ``HOME`` (the workdir), ``LANG``, the workspace's variables (``BENCHBOOK_CDP_URL`` …),
the templated ``env``, the named secrets and the ``BENCHBOOK_*`` files below — nothing else of
the server's environment. The task arrives on stdin and in ``BENCHBOOK_TASK``; the case input as
JSON in the file ``BENCHBOOK_CASE_FILE``; the answer is stdout (stripped) or, with ``answer:
file``, the file ``BENCHBOOK_ANSWER_FILE``; trace events go to ``BENCHBOOK_TRACE_FILE``.

On timeout the whole process group — children and grandchildren — is killed (``SIGKILL``) and the
result is ``error: timeout``; after a normal exit, processes left in the group are killed too.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from benchbook.contracts.harness import CommandHarness
from benchbook.contracts.run import CaseInput, RuntimeResult, Trace
from benchbook.errors import InvalidInput
from benchbook.runtime.environments import Workspace
from benchbook.runtime.harnesses.trace_events import apply_events
from benchbook.runtime.templates import render, template_values

#: Bytes of stdout kept for the answer (the end of it when longer).
STDOUT_LIMIT_BYTES = 16 * 1024 * 1024
#: Seconds to wait for the output pipes to close once the process group is dead.
_DRAIN_GRACE_S = 2.0


class _Prepared:
    """Argv, cwd and environment of one invocation, rendered from the harness config."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.argv, self.cwd, self.env = argv, cwd, env


def _prepare(
    harness: CommandHarness,
    case_input: CaseInput,
    workspace: Workspace,
    secrets: Mapping[str, str],
    private: Path,
) -> _Prepared:
    """Render templates and build the clean environment.

    Raises:
        InvalidInput: a bad template (a harness registered without the check).
        KeyError: a named secret is missing; its name is the key.
    """
    config = harness.config
    values = template_values(case_input, workspace.workdir)
    argv = [render(arg, f"config.argv[{i}]", values) for i, arg in enumerate(config.argv)]
    cwd = workspace.workdir
    if config.cwd is not None:
        cwd = workspace.workdir / render(
            config.cwd, "config.cwd", values
        )  # an absolute cwd stays absolute
    env = {
        # The server's PATH: the harness's interpreters and tools are found where the server's are.
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(workspace.workdir),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
    }
    env.update(workspace.env_vars)
    env.update({k: render(v, f"config.env.{k}", values) for k, v in config.env.items()})
    for name in config.secrets:
        if name not in secrets:
            raise KeyError(name)
        env[name] = secrets[name]
    case_file = private / "case.json"
    case_file.write_text(case_input.model_dump_json(), encoding="utf-8")
    env.update(
        {
            "BENCHBOOK_TASK": case_input.task,
            "BENCHBOOK_CASE_FILE": str(case_file),
            "BENCHBOOK_ANSWER_FILE": str(private / "answer.txt"),
            "BENCHBOOK_TRACE_FILE": str(private / "trace.jsonl"),
            "BENCHBOOK_WORKDIR": str(workspace.workdir),
        }
    )
    return _Prepared(argv, cwd, env)


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


async def _feed(stdin: asyncio.StreamWriter | None, data: bytes) -> None:
    """Write the task to stdin and close it; a harness that never reads stdin is fine."""
    if stdin is None:
        return
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stdin.write(data)
        await stdin.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        stdin.close()


def _kill_group(pgid: int) -> None:
    """SIGKILL every process in the group ``pgid`` (no-op when none is left)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


async def _wait_group_gone(pgid: int, grace_s: float) -> None:
    """Wait until no process of group ``pgid`` is left (killed orphans are reaped by init, a
    moment after the kill), at most ``grace_s`` seconds."""
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return
        await asyncio.sleep(0.02)


async def _execute(
    prepared: _Prepared, task: str, timeout_s: float, tail_bytes: int
) -> tuple[int | None, bytes, bytes]:
    """Run the process; ``(exit code or None on timeout, stdout, stderr)``.

    Raises:
        OSError: the program could not be started.
    """
    proc = await asyncio.create_subprocess_exec(
        *prepared.argv,
        cwd=prepared.cwd,
        env=prepared.env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,  # its own process group: a timeout kills all of it
    )
    out_task = asyncio.ensure_future(_read_tail(proc.stdout, max(STDOUT_LIMIT_BYTES, tail_bytes)))
    err_task = asyncio.ensure_future(_read_tail(proc.stderr, tail_bytes))
    feed_task = asyncio.ensure_future(_feed(proc.stdin, task.encode("utf-8")))
    returncode: int | None = None
    try:
        returncode = await asyncio.wait_for(proc.wait(), timeout_s)
    except TimeoutError:
        pass
    finally:
        # Kill the group on timeout, on cancellation and after a normal exit alike: nothing the
        # harness started may outlive its case (and leftovers would hold the pipes open).
        _kill_group(proc.pid)
        if returncode is None:
            await proc.wait()
        feed_task.cancel()
    await _wait_group_gone(proc.pid, _DRAIN_GRACE_S)
    done, pending = await asyncio.wait({out_task, err_task}, timeout=_DRAIN_GRACE_S)
    for task_ in pending:  # a process that left the group (setsid) may still hold a pipe
        task_.cancel()
    stdout = out_task.result() if out_task in done else b""
    stderr = err_task.result() if err_task in done else b""
    return returncode, stdout, stderr


async def run_command(
    harness: CommandHarness,
    case_input: CaseInput,
    workspace: Workspace,
    secrets: Mapping[str, str],
) -> RuntimeResult:
    """Run a command harness on one (case, sample); never raises for a harness failure.

    Args:
        harness: the command harness.
        case_input: the case without gold; its ``timeout_s`` applies unless the harness sets one.
        workspace: a ready environment (``error`` None); its ``tail_bytes`` bounds the stdout
            and stderr tails kept in the trace.
        secrets: secret name → value; every name in ``config.secrets`` must be present.

    Returns:
        RuntimeResult: ``ok``; or ``error`` with ``timeout``, ``exit code N`` (the answer still
        captured), ``missing secret NAME``, ``cannot start …`` or a template problem.
    """
    started_at = datetime.now(UTC)
    started = time.monotonic()
    tail_bytes = workspace.tail_bytes
    trace = Trace(started_at=started_at)
    # Beside the workdir, inside the case's own directory (removed with it): one directory
    # fewer to create per case than a separate temporary directory.
    private = workspace.workdir.parent / "harness"
    await asyncio.to_thread(private.mkdir, 0o700, False, True)
    try:
        try:
            prepared = _prepare(harness, case_input, workspace, secrets, private)
        except KeyError as exc:
            return RuntimeResult(status="error", error=f"missing secret {exc.args[0]}", trace=trace)
        except InvalidInput as exc:
            return RuntimeResult(status="error", error=exc.message, trace=trace)
        timeout_s = harness.config.timeout_s or case_input.timeout_s
        try:
            returncode, stdout, stderr = await _execute(
                prepared, case_input.task, timeout_s, tail_bytes
            )
        except OSError as exc:
            error = f"cannot start {prepared.argv[0]}: {exc.strerror or exc}"
            return RuntimeResult(status="error", error=error, trace=trace)
        trace.duration_ms = int((time.monotonic() - started) * 1000)
        trace.stdout_tail = stdout[-tail_bytes:].decode("utf-8", "replace")
        trace.stderr_tail = stderr[-tail_bytes:].decode("utf-8", "replace")
        trace.answer = _answer(harness, stdout, private / "answer.txt", trace)
        apply_events(trace, private / "trace.jsonl")
    finally:
        await asyncio.to_thread(shutil.rmtree, private, True)
    if returncode is None:
        return RuntimeResult(status="error", error="timeout", trace=trace)
    if returncode != 0:
        return RuntimeResult(status="error", error=f"exit code {returncode}", trace=trace)
    return RuntimeResult(status="ok", trace=trace)


def _answer(harness: CommandHarness, stdout: bytes, answer_file: Path, trace: Trace) -> str:
    """Stdout stripped, or the answer file's text stripped (``answer: file``)."""
    if harness.config.answer == "stdout":
        return stdout.decode("utf-8", "replace").strip()
    try:
        return answer_file.read_bytes().decode("utf-8", "replace").strip()
    except FileNotFoundError:
        trace.events.append({"type": "note", "text": "the harness wrote no answer file"})
        return ""
