"""Running one case end to end in the runtime tests: environment, harness, clean-up."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from benchbook.contracts.harness import CommandHarness, OpenAIHarness, PythonHarness
from benchbook.contracts.run import CaseInput, RuntimeResult
from benchbook.runtime import RuntimeConfig, open_environment, run_harness

AnyHarness = CommandHarness | OpenAIHarness | PythonHarness
RunCase = Callable[..., RuntimeResult]


async def run_case_async(
    harness: AnyHarness,
    case_input: CaseInput,
    config: RuntimeConfig,
    secrets: Mapping[str, str] | None = None,
) -> RuntimeResult:
    """Open the case's environment, run the harness in it, close it."""
    async with open_environment(case_input, config) as workspace:
        return await run_harness(harness, case_input, workspace, secrets or {})
