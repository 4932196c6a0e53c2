"""The ``command`` harness kind (SPEC H.1): one process per (case, sample).

The process starts in the case's sandbox (:mod:`benchbook.runtime.sandbox`: its own
namespaces, only the workdir and the private ``BENCHBOOK_*`` files writable, the network only
with ``config.network: full``, limits from the case's ``resources``) in a clean environment: only
``PATH``, ``HOME`` (the workdir), ``LANG``, the workspace's variables (``BENCHBOOK_CDP_URL`` …),
the templated ``env``, the named secrets and the ``BENCHBOOK_*`` files below — nothing else of
the server's environment. The task arrives on stdin and in ``BENCHBOOK_TASK``; the case input as
JSON in the file ``BENCHBOOK_CASE_FILE``; the answer is stdout (stripped) or, with ``answer:
file``, the file ``BENCHBOOK_ANSWER_FILE``; trace events go to ``BENCHBOOK_TRACE_FILE``.

On timeout the whole sandbox — children and grandchildren — is killed (``SIGKILL``) and the
result is ``error: timeout``; after a normal exit, processes left in it are killed too.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import stat
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from benchbook.contracts.harness import CommandHarness
from benchbook.contracts.run import CaseInput, RuntimeResult, Trace
from benchbook.errors import InvalidInput
from benchbook.runtime.environments import Workspace
from benchbook.runtime.environments.cdp_relay import relay_argv
from benchbook.runtime.harnesses.answers import ANSWER_LIMIT_BYTES, too_large
from benchbook.runtime.harnesses.case_file import CASE_FILE_NAME, write_case_file, zero_case_file
from benchbook.runtime.harnesses.trace_events import apply_events
from benchbook.runtime.sandbox import (
    SandboxError,
    SandboxPolicy,
    SandboxResult,
    limits_for,
    run_sandboxed,
)
from benchbook.runtime.sandbox_args import shown_anyway
from benchbook.runtime.templates import compile_harness_template, render, template_values

#: Bytes of stdout kept for the answer (the end of it when longer); an answer file past it is
#: the case's error (:mod:`.answers`).
STDOUT_LIMIT_BYTES = ANSWER_LIMIT_BYTES
#: The files of the harness's private directory (``BENCHBOOK_*_FILE``) removed after each case
#: (``case.json`` stays, zeroed, for the next case: :mod:`.case_file`).
_REMOVED_FILES = ("answer.txt", "trace.jsonl")


class _Prepared:
    """Argv, cwd and environment of one invocation, rendered from the harness config, and the
    files bound read-only (:func:`_readable`, filled in by :func:`_setup`)."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.argv, self.cwd, self.env = argv, cwd, env
        self.readable: list[Path] = []


def _prepare(
    harness: CommandHarness,
    case_input: CaseInput,
    workspace: Workspace,
    secrets: Mapping[str, str],
    private: Path,
) -> _Prepared:
    """Render templates and build the clean environment (the files in ``private`` are
    written by :func:`_setup`).

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
    env.update(
        {
            "BENCHBOOK_TASK": case_input.task,
            "BENCHBOOK_CASE_FILE": str(private / CASE_FILE_NAME),
            "BENCHBOOK_ANSWER_FILE": str(private / "answer.txt"),
            "BENCHBOOK_TRACE_FILE": str(private / "trace.jsonl"),
            "BENCHBOOK_WORKDIR": str(workspace.workdir),
        }
    )
    return _Prepared(argv, cwd, env)


def argv_files(registered: list[str]) -> list[tuple[int, Path]]:
    """``(index, path)`` of the files the registered argv names by absolute path — a script run
    by an interpreter — that exist now; directories are not counted (``docs/security.md``:
    ``BENCHBOOK_SANDBOX_RO_PATHS`` for more).

    Only literal elements after the program count: an element with a template field is
    skipped, so a path filled in from case data (``{task}``, ``{case_id}`` — written by members)
    is never bound.
    """
    paths: list[tuple[int, Path]] = []
    for index, arg in enumerate(registered[1:], start=1):
        template = compile_harness_template(arg, f"config.argv[{index}]")
        if template.fields:
            continue
        literal = template.render({})
        if literal.startswith("/") and Path(literal).is_file():
            paths.append((index, Path(literal)))
    return paths


def unshown_argv_files(registered: list[str], policy: SandboxPolicy) -> list[tuple[int, Path]]:
    """The :func:`argv_files` a sandbox of ``policy`` does not already show: binding them is
    what only a harness an installation admin registered may have (``policy.argv_files``)."""
    return [(i, p) for i, p in argv_files(registered) if not shown_anyway(policy, p)]


def argv_file_refusal(index: int, path: Path) -> str:
    """Why ``config.argv[index]`` naming ``path`` is refused for a harness no installation admin
    registered."""
    return (
        f"config.argv[{index}]: {path} is a file outside what every sandbox sees, and a command"
        " harness's own files are bound into its sandbox only when an installation admin"
        " registered it — ask the operator to list its directory in BENCHBOOK_SANDBOX_RO_PATHS"
        " (installation-wide) or an installation admin to register the harness"
        " (docs/security.md)"
    )


def _readable(registered: list[str], policy: SandboxPolicy) -> list[Path]:
    """The files to bind read-only: :func:`argv_files` when ``policy.argv_files`` (a harness an
    installation admin registered); otherwise none, and a file the sandbox would not show
    refuses the case.

    Raises:
        SandboxError: ``config.argv[i]`` names such a file and ``policy.argv_files`` is off.
    """
    if policy.argv_files:
        return [path for _, path in argv_files(registered)]
    for index, path in unshown_argv_files(registered, policy):
        raise SandboxError(argv_file_refusal(index, path), {"path": f"config.argv[{index}]"})
    return []


async def _execute(
    harness: CommandHarness,
    case_input: CaseInput,
    workspace: Workspace,
    prepared: _Prepared,
    private: Path,
) -> SandboxResult:
    """Run the process in the case's sandbox (see the module docstring).

    Raises:
        OSError: the program could not be started. SandboxError: the sandbox refused.
    """
    policy = workspace.sandbox
    resources = case_input.resources
    timeout_s = harness.config.timeout_s or case_input.timeout_s
    limits = limits_for(
        policy,
        timeout_s=timeout_s,
        cpu_millicores=resources.cpu_millicores if resources else None,
        memory_mb=resources.memory_mb if resources else None,
    )
    argv, writable = prepared.argv, [workspace.workdir, private]
    if workspace.cdp_relay is not None and harness.config.network == "none":
        port, socket_path = workspace.cdp_relay  # the browser, reached without network
        argv = relay_argv(port, socket_path, argv)
        writable.append(socket_path.parent)
    return await run_sandboxed(
        argv,
        policy=policy,
        cwd=prepared.cwd,
        env=prepared.env,
        timeout_s=timeout_s,
        writable=writable,
        readable=prepared.readable,
        network=harness.config.network,
        limits=limits,
        stdin=case_input.task.encode("utf-8"),
        output_limit_bytes=max(STDOUT_LIMIT_BYTES, workspace.tail_bytes),
    )


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
        RuntimeResult: ``ok``; or ``error`` with ``timeout``, ``exit code N[: stderr's last
        line]`` (the answer still captured), ``missing secret NAME``, ``cannot start …`` or a
        template problem.
    """
    started_at = datetime.now(UTC)
    started = time.monotonic()
    tail_bytes = workspace.tail_bytes
    trace = Trace(started_at=started_at)
    # Beside the workdir, inside the case's own directory (removed with it): one directory
    # fewer to create per case than a separate temporary directory.
    private = workspace.workdir.parent / "harness"
    try:
        prepared = _prepare(harness, case_input, workspace, secrets, private)
    except KeyError as exc:
        return RuntimeResult(status="error", error=f"missing secret {exc.args[0]}", trace=trace)
    except InvalidInput as exc:
        return RuntimeResult(status="error", error=exc.message, trace=trace)
    # File work runs in a thread, one hop before the process and one after: on the event loop
    # it held up every other case (bench/command_run.py).
    collected = False
    try:
        try:
            await asyncio.to_thread(
                _setup, harness, case_input, private, prepared, workspace.sandbox
            )
        except OSError as exc:  # case.json refused (a link in its place) or unwritable
            error = f"cannot write {CASE_FILE_NAME}: {exc.strerror or exc}"
            return RuntimeResult(status="error", error=error, trace=trace)
        except SandboxError as exc:  # an argv file this harness may not have bound
            return RuntimeResult(status="error", error=f"sandbox: {exc.message}", trace=trace)
        try:
            done = await _execute(harness, case_input, workspace, prepared, private)
        except OSError as exc:
            error = f"cannot start {prepared.argv[0]}: {exc.strerror or exc}"
            return RuntimeResult(status="error", error=error, trace=trace)
        except SandboxError as exc:
            return RuntimeResult(status="error", error=f"sandbox: {exc.message}", trace=trace)
        returncode, stdout, stderr = done.exit_code, done.stdout, done.stderr
        trace.duration_ms = int((time.monotonic() - started) * 1000)
        trace.stdout_tail = stdout[-tail_bytes:].decode("utf-8", "replace")
        trace.stderr_tail = stderr[-tail_bytes:].decode("utf-8", "replace")
        collected = True
        problem = await asyncio.to_thread(
            _collect, harness, stdout, private, trace, workspace.pooled
        )
    finally:
        if not collected:
            await asyncio.to_thread(shutil.rmtree, private, True)
    if problem is not None:
        return RuntimeResult(status="error", error=problem, trace=trace)
    if returncode is None:
        return RuntimeResult(status="error", error="timeout", trace=trace)
    if returncode != 0:
        said = _last_line(trace.stderr_tail)
        error = f"exit code {returncode}" + (f": {said}" if said else "")
        return RuntimeResult(status="error", error=error, trace=trace)
    return RuntimeResult(status="ok", trace=trace)


#: Characters of stderr's last line an ``exit code N`` error quotes.
SAID_CHARS = 200


def _last_line(stderr_tail: str) -> str:
    """The last non-blank line of ``stderr_tail`` (at most :data:`SAID_CHARS` characters, cut
    with ``…``): why a process that exited non-zero says it did (``python3: can't open file
    …``), so the run's error summary names the cause, not only ``6 × exit code 2``."""
    lines = [line.strip() for line in stderr_tail.splitlines() if line.strip()]
    if not lines:
        return ""
    last = lines[-1]
    return last if len(last) <= SAID_CHARS else last[: SAID_CHARS - 1] + "…"


def _setup(
    harness: CommandHarness,
    case_input: CaseInput,
    private: Path,
    prepared: _Prepared,
    policy: SandboxPolicy,
) -> None:
    """Before the process (in a thread): the harness's script files to bind
    (:func:`_readable`), then the private directory with ``case.json`` (rewritten in place when
    a pooled directory kept it: :mod:`.case_file`).

    Raises:
        SandboxError: an argv file the harness may not have bound. OSError: ``case.json``.
    """
    prepared.readable = _readable(harness.config.argv, policy)
    private.mkdir(0o700, False, True)
    write_case_file(str(private / CASE_FILE_NAME), case_input.model_dump_json().encode())


def _collect(
    harness: CommandHarness, stdout: bytes, private: Path, trace: Trace, keep_empty: bool
) -> str | None:
    """After the process (in a thread): the answer and the trace events into ``trace``, then
    the private directory removed — or only emptied when ``keep_empty`` (a pooled case
    directory keeps it for the next case, with ``case.json`` zeroed; anything but the three
    files there, or a ``case.json`` that is not a plain file of its own: removed).

    Returns:
        The case's error when the answer file is past the bound (no answer kept), else None.
    """
    try:
        problem: str | None = None
        try:
            trace.answer = _answer(harness, stdout, private / "answer.txt", trace)
        except _TooLarge as exc:
            trace.answer, problem = "", str(exc)
        apply_events(trace, private / "trace.jsonl")
        return problem
    finally:
        if not (keep_empty and _emptied(private)):
            shutil.rmtree(private, True)


def _emptied(private: Path) -> bool:
    """Remove the answer and trace files from ``private`` and zero ``case.json``; whether only
    that zeroed file is left (:func:`.case_file.zero_case_file`)."""
    try:
        for name in _REMOVED_FILES:
            with contextlib.suppress(FileNotFoundError):
                (private / name).unlink()
        return zero_case_file(str(private / CASE_FILE_NAME)) and os.listdir(private) == [
            CASE_FILE_NAME
        ]
    except OSError:  # a directory in a file's place, or ``private`` made unreadable
        return False


class _TooLarge(Exception):
    """The answer file is past :data:`ANSWER_LIMIT_BYTES` (the message is the case's error)."""


def _answer(harness: CommandHarness, stdout: bytes, answer_file: Path, trace: Trace) -> str:
    """Stdout stripped, or the answer file's text stripped (``answer: file``): at most
    :data:`ANSWER_LIMIT_BYTES` + 1 bytes of it are read, never the whole file first.

    Raises:
        _TooLarge: the file holds more than the bound.
    """
    if harness.config.answer == "stdout":
        return stdout.decode("utf-8", "replace").strip()
    try:
        # O_NOFOLLOW: the harness may have left a link in its place (to a file of its own
        # sandbox, or a FIFO that never ends): only a regular file is read.
        fd = os.open(answer_file, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        trace.events.append({"type": "note", "text": "the harness wrote no answer file"})
        return ""
    except OSError as exc:
        raise _TooLarge(f"the answer file cannot be read: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise _TooLarge("the answer file is not a regular file")
        data = handle.read(ANSWER_LIMIT_BYTES + 1)
    if len(data) > ANSWER_LIMIT_BYTES:
        seen = max(info.st_size, len(data))
        raise _TooLarge(too_large(f"{seen:,} bytes", "the answer file"))
    return data.decode("utf-8", "replace").strip()
