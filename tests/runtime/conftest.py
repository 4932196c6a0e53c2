"""Fixtures of the runtime tests: a runtime config in ``tmp_path`` and a one-call case runner."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

import pytest

from benchbook.contracts.run import CaseInput, RuntimeResult
from benchbook.runtime import RuntimeConfig
from tests.runtime.runner import AnyHarness, RunCase, run_case_async


@pytest.fixture
def runtime_config(tmp_path: Path) -> RuntimeConfig:
    """Working copies under ``tmp_path/work``, mirrors under ``tmp_path/mirrors``."""
    return RuntimeConfig(work_root=tmp_path / "work", mirrors=tmp_path / "mirrors")


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
