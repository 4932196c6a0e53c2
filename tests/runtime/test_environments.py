"""Environment kinds without a repository (SPEC H.3): prompt output, missing providers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchbook.contracts.dataset import OsUseEnv, PromptEnv, RepoEnv
from benchbook.contracts.harness import CommandHarness
from benchbook.contracts.run import CaseInput
from benchbook.runtime import RuntimeConfig
from tests.runtime.runner import RunCase


def _harness(script: str, **config: Any) -> CommandHarness:
    return CommandHarness.model_validate(
        {"id": "agent", "version": "1.0.0", "config": {"argv": ["sh", "-c", script], **config}}
    )


def _case(env: Any, case_id: str = "c1") -> CaseInput:
    return CaseInput(case_id=case_id, env=env, task="do it", timeout_s=60)


def test_a_path_source_and_an_image_need_a_provider(run_case: RunCase) -> None:
    env = RepoEnv.model_validate({"source": {"path": "/testbed"}})
    assert run_case(_harness("true"), _case(env)).error == "no environment provider for image"
    imaged = CaseInput(case_id="c1", env=PromptEnv(), task="t", image="python:3.11")
    assert run_case(_harness("true"), imaged).error == "no environment provider for image"


def test_an_os_use_case_without_a_provider_is_an_error_and_starts_nothing(
    run_case: RunCase, tmp_path: Path
) -> None:
    marker = tmp_path / "harness-ran"
    result = run_case(_harness(f"touch {marker}"), _case(OsUseEnv()))
    assert (result.status, result.error) == ("error", "no environment provider for os-use")
    assert not marker.exists()


def test_a_prompt_snapshot_keeps_the_small_text_files_left_behind(run_case: RunCase) -> None:
    binary = "head -c 64 /dev/urandom > b.bin; printf '\\000' >> b.bin"
    harness = _harness(
        f"printf 'day 1: museum' > plan.md; mkdir .cache; echo x > .cache/y; {binary}"
    )
    result = run_case(harness, _case(PromptEnv()))
    assert result.trace.env_snapshot.output == {"plan.md": "day 1: museum"}


def test_an_os_use_case_runs_when_a_provider_is_configured(
    run_case: RunCase, tmp_path: Path
) -> None:
    config = RuntimeConfig(
        work_root=tmp_path / "w", mirrors=tmp_path / "m", env_providers=frozenset({"os-use"})
    )
    result = run_case(
        _harness('printf %s "$DISPLAY"'), _case(OsUseEnv(display=":5")), config=config
    )
    assert (result.status, result.trace.answer) == ("ok", ":5")
