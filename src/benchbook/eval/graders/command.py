"""Workspace graders (SPEC H.5): ``command`` and ``tests-pass`` run a command in the case
workspace after the harness finished.

A workspace grader is ``async grader(spec, submission, case) -> Score``. The command runs in
``submission.workdir`` like a command harness (SPEC H.1), in the case's sandbox
(:mod:`benchbook.runtime.sandbox`, ``submission.sandbox``: only the workdir writable, no
network, the installation's default limits) with a clean environment (``PATH``, ``HOME`` = the
workdir, ``LANG``; nothing else of the server's), stdin closed; on timeout the whole sandbox is
killed (grandchildren too) and the score is ``status = error``; a sandbox that cannot start is
an ``error`` score naming why. Rescoring a saved run has no workspace: the score is
``skipped``.

``command`` config: ``cmd`` (a shell command line, run by ``/bin/sh -c``) or ``argv`` (a list
of strings, no shell) — exactly one; ``pass_pattern`` (optional Python regex searched in stdout
and stderr with ``re.MULTILINE``); ``timeout_s`` (default 600). Pass = the pattern matches when
given, else exit code 0.

``tests-pass`` config: the command is ``cmd``/``argv`` when given, else the case metadata key
named by ``cmd_field`` (default ``test_cmd``; text → shell, list → argv); ``timeout_s`` as
above. Pass = exit code 0; pytest-style summary counts (``3 passed, 1 failed``) go to
``detail.counts`` when the output has them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

from pydantic import JsonValue

from benchbook.contracts.dataset import Case, GraderSpec
from benchbook.contracts.score import Score
from benchbook.eval.graders.verdicts import error, skipped, verdict
from benchbook.eval.submission import Submission
from benchbook.runtime.sandbox import SandboxError, SandboxPolicy, run_sandboxed
from benchbook.user_patterns import PatternTimeout, UserPattern

WorkspaceGrader: TypeAlias = Callable[[GraderSpec, "Submission", Case], Awaitable[Score]]
"""``async (spec, submission, case) -> Score``."""

DEFAULT_TIMEOUT_S = 600.0
TAIL_CHARS = 4096
MAX_OUTPUT_BYTES = 4 * 1024 * 1024
"""Per stream, the end of the output kept for the pass pattern and the counts (4 MiB)."""
_COUNT = re.compile(
    r"\b(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|warnings?|deselected)\b"
)
_COUNT_KEY = {"error": "errors", "warning": "warnings"}


@dataclass(frozen=True)
class CommandOutcome:
    """A finished (or killed) workspace command.

    Attributes:
        exit_code: the exit status; negative −N when killed by signal N; None after a timeout.
        stdout, stderr: the streams decoded as UTF-8 (replacement on bad bytes), at most the
            last :data:`MAX_OUTPUT_BYTES` of each.
        timed_out: the command ran past its timeout and its process group was killed.
        duration_ms: wall time in milliseconds.
    """

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    duration_ms: int


def clean_env(workdir: Path) -> dict[str, str]:
    """The command's whole environment, as for a harness (SPEC H.1): ``PATH`` (the server's,
    else the OS default), ``HOME`` = ``workdir``, ``LANG`` (the server's, else ``C.UTF-8``)."""
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(workdir),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
    }


async def _drain(stream: asyncio.StreamReader | None, sink: bytearray) -> None:
    """Read ``stream`` to its end into ``sink``, keeping only its last MAX_OUTPUT_BYTES."""
    while stream is not None and (chunk := await stream.read(65536)):
        sink += chunk
        if len(sink) > MAX_OUTPUT_BYTES:
            del sink[: len(sink) - MAX_OUTPUT_BYTES]


def _kill_group(pgid: int) -> None:
    """SIGKILL every process left in the group (already gone is fine)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


async def run_in_workspace(
    argv: list[str], workdir: Path, timeout_s: float, extra_env: Mapping[str, str] | None = None
) -> CommandOutcome:
    """Run an installation admin's run-level scorer (SWE-bench's harness, ContextBench's
    upstream scorer: configured in the settings, they need Docker or their own Python) in
    ``workdir`` — **outside the sandbox**; a case's own graders use
    :func:`run_sandboxed_grader`. A new session (its own process group), clean environment
    (plus ``extra_env``), stdin closed. At the end — timeout or not — the group is SIGKILLed so
    no grandchild outlives it.

    Raises:
        OSError: the program cannot be started (missing, not executable).
    """
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=workdir,
        env={**clean_env(workdir), **(extra_env or {})},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    out, err = bytearray(), bytearray()
    timed_out = False
    try:
        await asyncio.wait_for(
            asyncio.gather(_drain(proc.stdout, out), _drain(proc.stderr, err), proc.wait()),
            timeout_s,
        )
    except TimeoutError:
        timed_out = True
    finally:
        _kill_group(proc.pid)  # pgid = pid: start_new_session made the child a group leader
        await proc.wait()
    return CommandOutcome(
        exit_code=None if timed_out else proc.returncode,
        stdout=out.decode("utf-8", "replace"),
        stderr=err.decode("utf-8", "replace"),
        timed_out=timed_out,
        duration_ms=round((time.monotonic() - started) * 1000),
    )


def _argv(value: JsonValue, key: str) -> list[str]:
    """A command as argv: text → ``/bin/sh -c text``; a list of strings as is.

    Raises:
        ValueError: anything else (names ``key``).
    """
    if isinstance(value, str) and value.strip():
        return ["/bin/sh", "-c", value]
    if isinstance(value, list) and value and all(isinstance(a, str) for a in value):
        return [str(a) for a in value]
    raise ValueError(f"{key} must be a non-empty command line or a non-empty list of strings")


def _config_argv(spec: GraderSpec) -> list[str] | None:
    """The command from ``config.cmd`` / ``config.argv`` (None when neither is given).

    Raises:
        ValueError: both are given, or the one given is malformed.
    """
    cmd, argv = spec.config.get("cmd"), spec.config.get("argv")
    if cmd is None and argv is None and spec.config.get("grader") is not None:
        ref = spec.config["grader"]
        raise ValueError(f"registered grader {ref!r} could not be resolved (deleted?); nothing ran")
    if cmd is not None and argv is not None:
        raise ValueError("give config.cmd or config.argv, not both")
    if cmd is not None:
        return _argv(cmd, "config.cmd")
    if argv is not None:
        if not isinstance(argv, list):
            raise ValueError("config.argv must be a list of strings")
        return _argv(argv, "config.argv")
    return None


def _timeout_s(spec: GraderSpec) -> float:
    """``config.timeout_s`` (> 0), default :data:`DEFAULT_TIMEOUT_S`. Raises ValueError."""
    value = spec.config.get("timeout_s", DEFAULT_TIMEOUT_S)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError(f"config.timeout_s must be a positive number, got {value!r}")
    return float(value)


def _detail(argv: list[str], outcome: CommandOutcome) -> dict[str, JsonValue]:
    return {
        "argv": list(argv),
        "exit_code": outcome.exit_code,
        "duration_ms": outcome.duration_ms,
        "stdout_tail": outcome.stdout[-TAIL_CHARS:],
        "stderr_tail": outcome.stderr[-TAIL_CHARS:],
    }


async def run_sandboxed_grader(
    argv: list[str], workdir: Path, timeout_s: float, policy: SandboxPolicy
) -> CommandOutcome:
    """Run a grader's ``argv`` in ``workdir`` inside the case's sandbox (writable: the workdir
    only; network none), clean environment, stdin closed.

    Raises:
        OSError: the program cannot be started. SandboxError: the sandbox refused.
    """
    done = await run_sandboxed(
        argv,
        policy=policy,
        cwd=workdir,
        env=clean_env(workdir),
        timeout_s=timeout_s,
        writable=[workdir],
        output_limit_bytes=MAX_OUTPUT_BYTES,
    )
    return CommandOutcome(
        exit_code=done.exit_code,
        stdout=done.stdout.decode("utf-8", "replace"),
        stderr=done.stderr.decode("utf-8", "replace"),
        timed_out=done.timed_out,
        duration_ms=done.duration_ms,
    )


async def _run(
    spec: GraderSpec, submission: Submission, argv: list[str], timeout_s: float
) -> tuple[CommandOutcome | None, Score | None]:
    """Run ``argv`` in the workspace; a skipped/error score instead when that is the answer."""
    if submission.workdir is None:
        return None, skipped(
            spec, "the case workspace is gone (a rescore of a saved run has no workdir)"
        )
    policy = submission.sandbox or SandboxPolicy()
    try:
        outcome = await run_sandboxed_grader(argv, submission.workdir, timeout_s, policy)
    except SandboxError as exc:
        return None, error(spec, f"sandbox: {exc.message}", {"argv": list(argv)})
    if outcome.timed_out:
        message = f"timed out after {timeout_s:g} s (process group killed)"
        return None, error(spec, message, _detail(argv, outcome))
    return outcome, None


async def grade_command(spec: GraderSpec, submission: Submission, case: Case) -> Score:
    """Run ``config.cmd``/``config.argv`` in the workspace; pass on exit 0 or ``pass_pattern``."""
    try:
        argv = _config_argv(spec)
        if argv is None:
            raise ValueError("config.cmd (shell) or config.argv (list) is required")
        timeout_s = _timeout_s(spec)
        raw_pattern = spec.config.get("pass_pattern")
        if raw_pattern is not None and not isinstance(raw_pattern, str):
            raise ValueError("config.pass_pattern must be a regular expression")
        pattern = UserPattern(raw_pattern, re.MULTILINE) if raw_pattern is not None else None
    except (ValueError, re.error) as exc:
        return error(spec, f"bad config: {exc}")
    outcome, early = await _run(spec, submission, argv, timeout_s)
    if outcome is None:
        assert early is not None
        return early
    detail = _detail(argv, outcome)
    if pattern is None:
        return verdict(spec, outcome.exit_code == 0, detail)
    output = outcome.stdout + "\n" + outcome.stderr
    try:  # off the event loop; the match itself lets go of the GIL and is time-bound
        matched = await asyncio.to_thread(pattern.search, output) is not None
    except PatternTimeout as exc:
        return error(spec, f"command grader: pass_pattern: {exc} on this output", detail)
    return verdict(spec, matched, {**detail, "pass_pattern": pattern.pattern})


def parse_test_counts(output: str) -> dict[str, int]:
    """pytest-style summary counts from ``output``: the last line holding ``N passed`` or
    ``N failed`` (``"=== 3 passed, 1 failed, 2 skipped in 0.4s ==="`` → ``{passed: 3,
    failed: 1, skipped: 2}``; ``error``/``warning`` are pluralized). Empty when none."""
    for line in reversed(output.splitlines()):
        pairs = _COUNT.findall(line)
        if any(word in ("passed", "failed") for _, word in pairs):
            return {_COUNT_KEY.get(word, word): int(count) for count, word in pairs}
    return {}


def _tests_argv(spec: GraderSpec, case: Case) -> list[str]:
    """The test command: config ``cmd``/``argv``, else ``case.metadata[cmd_field]``."""
    argv = _config_argv(spec)
    if argv is not None:
        return argv
    field = spec.config.get("cmd_field", "test_cmd")
    if not isinstance(field, str) or not field:
        raise ValueError("config.cmd_field must name a case metadata key")
    if field not in case.metadata:
        raise ValueError(
            f"no test command: config.cmd is absent and case metadata has no {field!r}"
        )
    return _argv(case.metadata[field], f"case metadata {field!r}")


async def grade_tests_pass(spec: GraderSpec, submission: Submission, case: Case) -> Score:
    """Run the case's test command in the workspace; pass on exit code 0."""
    try:
        argv = _tests_argv(spec, case)
        timeout_s = _timeout_s(spec)
    except ValueError as exc:
        return error(spec, f"bad config: {exc}")
    outcome, early = await _run(spec, submission, argv, timeout_s)
    if outcome is None:
        assert early is not None
        return early
    counts = parse_test_counts(outcome.stdout + "\n" + outcome.stderr)
    detail: dict[str, JsonValue] = {**_detail(argv, outcome), "counts": dict(counts)}
    return verdict(spec, outcome.exit_code == 0, detail)


WORKSPACE_GRADERS: dict[str, WorkspaceGrader] = {
    "command": grade_command,
    "tests-pass": grade_tests_pass,
}
"""Workspace grader id → async grader."""
