"""Prompt directories are reused only when the previous case left them exactly as made."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from benchbook.contracts.dataset import PromptEnv
from benchbook.contracts.harness import CommandHarness
from benchbook.contracts.run import CaseInput, RuntimeResult
from benchbook.runtime import RuntimeConfig, open_environment, run_harness
from benchbook.runtime.environments.pool import PROMPT_DIRECTORIES, DirectoryPool


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


def _command(script: str) -> CommandHarness:
    return CommandHarness.model_validate(
        {"id": "h", "version": "1.0.0", "config": {"argv": ["sh", "-c", script]}}
    )


def _run(config: RuntimeConfig, harness: CommandHarness) -> tuple[Path, RuntimeResult]:
    async def main() -> tuple[Path, RuntimeResult]:
        async with open_environment(_case("c"), config) as workspace:
            return workspace.workdir, await run_harness(harness, _case("c"), workspace, {})

    return asyncio.run(main())


def test_a_command_harness_leaves_its_private_directory_empty_for_the_next_case(
    runtime_config: RuntimeConfig,
) -> None:
    """Issue 32: a pooled prompt directory keeps the command harness's private directory,
    emptied but for ``case.json`` truncated to zero bytes (no mkdir/rmdir, no create/unlink
    per case); the next case sees only its own ``case.json``, rewritten in place."""
    script = 'echo > "$BENCHBOOK_ANSWER_FILE"; ls -A "$(dirname "$BENCHBOOK_CASE_FILE")"'
    list_private = _command(script)
    first, result = _run(runtime_config, list_private)
    assert result.status == "ok", result.error
    private = first.parent / "harness"
    assert private.is_dir() and os.listdir(private) == ["case.json"]
    assert (private / "case.json").stat().st_size == 0
    second, result = _run(runtime_config, list_private)
    assert second == first and result.trace.stdout_tail.split() == ["answer.txt", "case.json"]
    PROMPT_DIRECTORIES.clear()


@pytest.mark.parametrize("left", ["bytes", "mode", "directory"])
def test_a_private_directory_counts_as_empty_only_with_a_zeroed_0600_case_file(
    tmp_path: Path, left: str
) -> None:
    """The pool's rule: ``harness`` may hold ``case.json`` only as a zeroed 0600 regular file."""
    pool = DirectoryPool()
    root = pool.take(tmp_path)
    private = root / "harness"
    private.mkdir(0o700)
    case_file = private / "case.json"
    case_file.touch(0o600)
    assert pool.keep(tmp_path, root) and pool.take_free(tmp_path) == root
    if left == "bytes":
        case_file.write_text("{}")
    elif left == "mode":
        case_file.chmod(0o644)
    else:
        case_file.unlink()
        case_file.mkdir(0o700)
    assert not pool.keep(tmp_path, root)


def test_a_private_directory_with_anything_else_left_in_it_is_removed(
    runtime_config: RuntimeConfig,
) -> None:
    """A file of the harness's own in its private directory: the directory is removed, never
    handed to the next case (nor the case directory, if that were not clean)."""
    leave = _command('touch "$(dirname "$BENCHBOOK_CASE_FILE")/planted"')
    first, result = _run(runtime_config, leave)
    assert result.status == "ok", result.error
    assert not (first.parent / "harness").exists()
    _, result = _run(runtime_config, _command('ls -A "$(dirname "$BENCHBOOK_CASE_FILE")"'))
    assert result.trace.stdout_tail.split() == ["case.json"]
    PROMPT_DIRECTORIES.clear()


def test_a_private_directory_of_another_mode_is_not_pooled(runtime_config: RuntimeConfig) -> None:
    first, result = _run(runtime_config, _command('chmod 755 "$(dirname "$BENCHBOOK_CASE_FILE")"'))
    assert result.status == "ok", result.error
    assert not first.parent.exists()  # the case directory was removed, not pooled
    PROMPT_DIRECTORIES.clear()
