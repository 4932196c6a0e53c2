"""Prompt directories are reused only when the previous case left them exactly as made."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from benchbook.contracts.dataset import PromptEnv
from benchbook.contracts.run import CaseInput
from benchbook.runtime import RuntimeConfig, open_environment
from benchbook.runtime.environments.pool import PROMPT_DIRECTORIES


def _case(case_id: str) -> CaseInput:
    return CaseInput(case_id=case_id, env=PromptEnv(), task="t")


async def _visit(config: RuntimeConfig, case_id: str, leave: str | None = None) -> Path:
    """Open a prompt environment, optionally leave ``leave`` behind; returns its workdir."""
    async with open_environment(_case(case_id), config) as workspace:
        assert os.listdir(workspace.workdir) == []  # every case starts empty
        if leave == "file":
            (workspace.workdir / ".cache").write_text("left behind")
        elif leave == "mode":
            workspace.workdir.chmod(0o755)
        return workspace.workdir


def test_an_untouched_prompt_directory_serves_the_next_case(runtime_config: RuntimeConfig) -> None:
    first = asyncio.run(_visit(runtime_config, "secret-case-id"))
    second = asyncio.run(_visit(runtime_config, "other"))
    assert first == second and second.exists()
    assert "secret-case-id" not in str(second)  # pooled directories carry no case id
    PROMPT_DIRECTORIES.clear()
    assert not second.exists()


def test_a_directory_with_anything_left_in_it_or_another_mode_is_removed(
    runtime_config: RuntimeConfig,
) -> None:
    for leave in ("file", "mode"):
        dirty = asyncio.run(_visit(runtime_config, "a", leave=leave))
        assert not dirty.parent.exists()
        fresh = asyncio.run(_visit(runtime_config, "b"))
        assert fresh != dirty
    PROMPT_DIRECTORIES.clear()


def test_kept_workdirs_are_never_pooled(tmp_path: Path) -> None:
    config = RuntimeConfig(work_root=tmp_path / "w", mirrors=tmp_path / "m", keep_workdirs=True)
    first = asyncio.run(_visit(config, "a"))
    second = asyncio.run(_visit(config, "b"))
    assert first != second and first.exists() and second.exists()
