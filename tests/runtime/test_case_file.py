"""The command harness's ``case.json``: rewritten in place from case to case, never through a
link the harness left in its place, zeroed after each case (``runtime/harnesses/case_file.py``)."""

from __future__ import annotations

import asyncio
import os
import stat
from dataclasses import replace
from pathlib import Path

import pytest

from benchbook.contracts.dataset import PromptEnv
from benchbook.contracts.harness import CommandHarness
from benchbook.contracts.run import CaseInput, RuntimeResult
from benchbook.runtime import RuntimeConfig, open_environment, run_harness
from benchbook.runtime.environments.pool import PROMPT_DIRECTORIES
from benchbook.runtime.harnesses.case_file import (
    CaseFileRefused,
    write_case_file,
    zero_case_file,
)
from benchbook.runtime.sandbox import SandboxPolicy


def test_a_case_file_is_rewritten_in_place_with_mode_0600(tmp_path: Path) -> None:
    path = tmp_path / "case.json"
    write_case_file(str(path), b'{"case_id": "a long first case id"}')
    first = path.stat()
    path.chmod(0o644)  # the harness may change the mode: the next write sets 0600 again
    write_case_file(str(path), b'{"case_id": "b"}')
    second = path.stat()
    assert path.read_bytes() == b'{"case_id": "b"}'  # truncated: nothing of the longer one left
    assert second.st_ino == first.st_ino  # the same file, not a new one
    assert stat.S_IMODE(first.st_mode) == stat.S_IMODE(second.st_mode) == 0o600
    assert zero_case_file(str(path)) and path.stat().st_size == 0
    assert path.stat().st_ino == first.st_ino


def _target(tmp_path: Path) -> Path:
    target = tmp_path / "elsewhere.txt"
    target.write_bytes(b"not the harness's to change")
    return target


def test_a_symlinked_case_file_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    target = _target(tmp_path)
    path = tmp_path / "private" / "case.json"
    path.parent.mkdir()
    path.symlink_to(target)
    with pytest.raises(CaseFileRefused):
        write_case_file(str(path), b"case data")
    assert not zero_case_file(str(path))
    assert target.read_bytes() == b"not the harness's to change"
    path.unlink()
    path.symlink_to(tmp_path / "missing")  # a dangling link: not created through either
    with pytest.raises(CaseFileRefused):
        write_case_file(str(path), b"case data")
    assert not (tmp_path / "missing").exists()


def test_a_hardlinked_case_file_is_refused_and_the_other_name_untouched(tmp_path: Path) -> None:
    target = _target(tmp_path)
    path = tmp_path / "private" / "case.json"
    path.parent.mkdir()
    os.link(target, path)
    with pytest.raises(CaseFileRefused):
        write_case_file(str(path), b"case data")
    assert not zero_case_file(str(path))
    assert target.read_bytes() == b"not the harness's to change"


def test_a_fifo_in_the_case_files_place_is_refused_without_waiting(tmp_path: Path) -> None:
    path = tmp_path / "case.json"
    os.mkfifo(path)
    with pytest.raises(CaseFileRefused):
        write_case_file(str(path), b"case data")
    assert not zero_case_file(str(path))


def _case(case_id: str) -> CaseInput:
    return CaseInput(case_id=case_id, env=PromptEnv(), task="t")


def _command(script: str) -> CommandHarness:
    return CommandHarness.model_validate(
        {"id": "h", "version": "1.0.0", "config": {"argv": ["sh", "-c", script]}}
    )


def _run(
    config: RuntimeConfig, harness: CommandHarness, case_id: str
) -> tuple[Path, RuntimeResult]:
    async def main() -> tuple[Path, RuntimeResult]:
        async with open_environment(_case(case_id), config) as workspace:
            return workspace.workdir, await run_harness(harness, _case(case_id), workspace, {})

    return asyncio.run(main())


def test_the_case_file_is_zeroed_after_the_case_and_rewritten_by_the_next(
    runtime_config: RuntimeConfig,
) -> None:
    show = _command('cat "$BENCHBOOK_CASE_FILE"')
    first, result = _run(runtime_config, show, "first-case-with-a-long-id")
    assert result.status == "ok", result.error
    assert '"first-case-with-a-long-id"' in result.trace.answer
    case_file = first.parent / "harness" / "case.json"
    info = case_file.stat()
    assert info.st_size == 0 and stat.S_IMODE(info.st_mode) == 0o600  # nothing of it stays
    second, result = _run(runtime_config, show, "second")
    assert second == first and case_file.stat().st_ino == info.st_ino  # reused in place
    assert '"second"' in result.trace.answer and "first-case" not in result.trace.answer
    assert case_file.stat().st_size == 0
    PROMPT_DIRECTORIES.clear()


@pytest.mark.parametrize("link", ["ln -sf", "ln -f"])
def test_a_case_file_the_harness_replaced_by_a_link_is_never_written_through(
    runtime_config: RuntimeConfig, tmp_path: Path, link: str
) -> None:
    """The harness replaces ``case.json`` by a link to a file of the server's user (with the
    sandbox off, the only way to reach one for a hardlink): zeroing it after the case is
    refused, the linked file keeps its bytes and the private directory is removed, not kept
    for the next case."""
    target = _target(tmp_path)
    config = replace(runtime_config, sandbox=SandboxPolicy(enabled=False))
    script = f'{link} {target} "$BENCHBOOK_CASE_FILE"'
    first, result = _run(config, _command(script), "a")
    assert result.status == "ok", result.error
    assert target.read_bytes() == b"not the harness's to change"
    assert not (first.parent / "harness").exists()  # removed, never handed to the next case
    _, result = _run(config, _command('ls -A "$(dirname "$BENCHBOOK_CASE_FILE")"'), "b")
    assert result.trace.answer.split() == ["case.json"]
    assert target.read_bytes() == b"not the harness's to change"
    PROMPT_DIRECTORIES.clear()
