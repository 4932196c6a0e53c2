"""Harness runners (SPEC H.1), one module per kind, behind :func:`run_harness`.

- ``command`` (:mod:`.command`): a process per (case, sample) in its own process group.
- ``python`` (:mod:`.python`): ``package.module:function`` called with the case input.
- ``openai`` (:mod:`.openai_compat`): one chat completion through the ``openai`` client.
- ``agent`` (:mod:`.agent`): the tool-calling loop; its tools run in the case's sandbox.
- ``external``: never run (its results are reported); an error result says so.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import UTC, datetime

from benchbook.contracts.harness import (
    AgentHarness,
    AnyHarness,
    CommandHarness,
    ExternalHarness,
    OpenAIHarness,
    PythonHarness,
)
from benchbook.contracts.run import CaseInput, EnvSnapshot, RuntimeResult, Trace
from benchbook.runtime.environments import Workspace
from benchbook.runtime.harnesses.answers import answer_problem
from benchbook.runtime.templates import check_harness_templates


async def run_harness(
    harness: AnyHarness,
    case_input: CaseInput,
    workspace: Workspace,
    secrets: Mapping[str, str],
) -> RuntimeResult:
    """Run ``harness`` on one (case, sample) in ``workspace``; never raises for a failure.

    Args:
        harness: the registered harness (command, python, openai or agent).
        case_input: the case without gold.
        workspace: the environment from :func:`~benchbook.runtime.open_environment`; when its
            ``error`` is set nothing is started and that error is returned.
        secrets: secret name → value, already resolved for the requester.

    Returns:
        RuntimeResult: ``ok``, or ``error`` with the reason (``timeout``, ``exit code 2``,
        ``missing secret NAME``, ``ValueError: …``, the workspace's error, an answer past
        16 MiB: :mod:`.answers`). The trace's
        ``env_snapshot`` is the workspace's snapshot after the harness (diff, output, URL …).
    """
    if workspace.error is not None:
        trace = Trace(env_snapshot=EnvSnapshot(audit=workspace.audit))
        return RuntimeResult(status="error", error=workspace.error, trace=trace)
    started_at = datetime.now(UTC)
    started = time.monotonic()
    try:
        result = await _dispatch(harness, case_input, workspace, secrets)
    except Exception as exc:  # a runner bug must still become data, never a crashed run
        trace = Trace(started_at=started_at, duration_ms=int((time.monotonic() - started) * 1000))
        result = RuntimeResult(
            status="error", error=f"runtime: {type(exc).__name__}: {exc}", trace=trace
        )
    problem = answer_problem(result.trace.answer)
    if problem is not None:  # a python function's, an agent's or a model's answer
        result.trace.answer = ""
        result = RuntimeResult(status="error", error=problem, trace=result.trace)
    try:
        result.trace.env_snapshot = await workspace.snapshot()
    except Exception as exc:
        result.trace.env_snapshot = EnvSnapshot(audit=workspace.audit)
        note = f"environment snapshot failed: {type(exc).__name__}: {exc}"
        result.trace.events.append({"type": "note", "text": note})
    return result


async def _dispatch(
    harness: AnyHarness,
    case_input: CaseInput,
    workspace: Workspace,
    secrets: Mapping[str, str],
) -> RuntimeResult:
    if isinstance(harness, CommandHarness):
        from benchbook.runtime.harnesses.command import run_command

        return await run_command(harness, case_input, workspace, secrets)
    if isinstance(harness, PythonHarness):
        from benchbook.runtime.harnesses.python import run_python

        return await run_python(harness, case_input, workspace)
    if isinstance(harness, ExternalHarness):
        return RuntimeResult(
            status="error",
            error=f"harness {harness.id}@{harness.version} is external: its results are reported"
            " (report_run), it is never run here",
            trace=Trace(),
        )
    if isinstance(harness, AgentHarness):
        from benchbook.runtime.harnesses.agent import run_agent

        return await run_agent(harness, case_input, workspace, secrets)
    assert isinstance(harness, OpenAIHarness)
    # Imported lazily: the openai client is only loaded when an openai harness runs.
    from benchbook.runtime.harnesses.openai_compat import run_openai

    return await run_openai(harness, case_input, workspace, secrets)


__all__ = ["check_harness_templates", "run_harness"]
