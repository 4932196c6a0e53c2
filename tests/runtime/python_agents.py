"""Python harness callables used by the runtime tests (``tests.runtime.python_agents:...``)."""

from __future__ import annotations

import asyncio
from typing import Any

from benchbook.contracts.run import CaseInput, HarnessOutput, Usage
from benchbook.runtime.harnesses.python import current_workspace


def shout(case_input: CaseInput) -> str:
    """Sync: the task in capitals, with the workdir's name (seen through the workspace)."""
    return f"{case_input.task.upper()} in {current_workspace().workdir.name}"


async def shout_async(case_input: CaseInput) -> str:
    """Async: the task in capitals after yielding to the loop once."""
    await asyncio.sleep(0)
    return case_input.task.upper() + "!"


def fail(case_input: CaseInput) -> str:
    """Always raises ValueError naming the case."""
    raise ValueError(f"cannot solve {case_input.case_id}")


def structured(case_input: CaseInput) -> HarnessOutput:
    """A full HarnessOutput with messages, a tool call and usage."""
    return HarnessOutput(
        answer="4",
        messages=[
            {"role": "user", "content": case_input.task},
            {"role": "assistant", "content": "4"},
        ],
        tool_calls=[{"name": "calculator", "arguments": {"expr": "2+2"}}],
        usage=Usage(input_tokens=12, output_tokens=1),
        model="tiny-model",
    )


def as_dict(case_input: CaseInput) -> dict[str, Any]:
    """A dict validating as HarnessOutput."""
    return {"answer": "from a dict", "usage": {"input_tokens": 3, "output_tokens": 4}}


def wrong_type(case_input: CaseInput) -> int:
    """Returns something that is neither text nor HarnessOutput."""
    return 42


async def slow_async(case_input: CaseInput) -> str:
    """Sleeps far past any test timeout."""
    await asyncio.sleep(60)
    return "too late"


def slow_sync(case_input: CaseInput) -> str:
    """Sleeps a little past a one-second timeout (a thread cannot be killed; keep it short)."""
    import time

    time.sleep(1.5)
    return "too late"


def oversized(case_input: CaseInput) -> str:
    """An answer one byte past the 16 MiB bound (issue: answers had no size limit)."""
    return "a" * (16 * 1024 * 1024 + 1)
