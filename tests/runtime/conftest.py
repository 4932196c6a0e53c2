"""Fixtures of the runtime tests: a runtime config in ``tmp_path`` and a one-call case runner."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from benchbook.contracts.harness import CommandHarness, OpenAIHarness, PythonHarness
from benchbook.contracts.run import CaseInput, RuntimeResult
from benchbook.runtime import RuntimeConfig, open_environment, run_harness

AnyHarness = CommandHarness | OpenAIHarness | PythonHarness
RunCase = Callable[..., RuntimeResult]


@pytest.fixture
def runtime_config(tmp_path: Path) -> RuntimeConfig:
    """Working copies under ``tmp_path/work``, mirrors under ``tmp_path/mirrors``."""
    return RuntimeConfig(work_root=tmp_path / "work", mirrors=tmp_path / "mirrors")


async def run_case_async(
    harness: AnyHarness,
    case_input: CaseInput,
    config: RuntimeConfig,
    secrets: Mapping[str, str] | None = None,
) -> RuntimeResult:
    """Open the case's environment, run the harness in it, close it."""
    async with open_environment(case_input, config) as workspace:
        return await run_harness(harness, case_input, workspace, secrets or {})


@pytest.fixture
def run_case(runtime_config: RuntimeConfig) -> RunCase:
    """``run_case(harness, case_input, secrets=None, config=None) -> RuntimeResult``."""

    def run(
        harness: AnyHarness,
        case_input: CaseInput,
        secrets: Mapping[str, str] | None = None,
        config: RuntimeConfig | None = None,
    ) -> RuntimeResult:
        return asyncio.run(run_case_async(harness, case_input, config or runtime_config, secrets))

    return run
