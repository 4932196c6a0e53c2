"""One case's answer is bounded like a command harness's stdout (16 MiB; a security finding:
an ``answer: file`` harness writing 300 MB took the server past 1 GB and stored 300 MB): past
it the case is an error naming the bound and the size seen, and nothing of the answer is kept;
the file is never read whole, nor through a link the harness left in its place (it would read
a host file with the server's rights). Real bubblewrap."""

from __future__ import annotations

from pathlib import Path

from benchbook.contracts.dataset import PromptEnv
from benchbook.contracts.harness import CommandHarness, PythonHarness
from benchbook.contracts.run import CaseInput
from benchbook.runtime.harnesses.answers import ANSWER_LIMIT_BYTES, answer_problem
from tests.runtime.runner import RunCase

SECRET = "host-only-3b9e"


def _file_harness(script: str) -> CommandHarness:
    config = {"argv": ["sh", "-c", script], "answer": "file"}
    return CommandHarness.model_validate({"id": "h", "version": "1.0.0", "config": config})


def _case() -> CaseInput:
    return CaseInput(case_id="c1", env=PromptEnv(), task="t", timeout_s=60)


def test_an_answer_file_past_16_mib_is_an_error_naming_the_bound_and_the_size(
    run_case: RunCase,
) -> None:
    # A sparse 64 MiB file: the old code read all of it into memory and stored it.
    result = run_case(_file_harness('truncate -s 64M "$BENCHBOOK_ANSWER_FILE"'), _case())
    assert result.status == "error" and result.error is not None
    assert result.error.startswith("the answer file is too large: 67,108,864 bytes"), result.error
    assert f"{ANSWER_LIMIT_BYTES:,} bytes (16 MiB)" in result.error
    assert result.trace.answer == ""


def test_an_answer_file_of_exactly_16_mib_is_kept(run_case: RunCase) -> None:
    script = f'head -c {ANSWER_LIMIT_BYTES} /dev/zero | tr "\\0" a > "$BENCHBOOK_ANSWER_FILE"'
    result = run_case(_file_harness(script), _case())
    assert result.status == "ok", result.error
    assert len(result.trace.answer) == ANSWER_LIMIT_BYTES


def test_an_answer_or_trace_file_left_as_a_link_is_not_followed(
    run_case: RunCase, tmp_path: Path
) -> None:
    host = tmp_path / "host-only.json"
    host.write_text('{"type": "note", "text": "' + SECRET + '"}\n')
    script = f'ln -s {host} "$BENCHBOOK_ANSWER_FILE"; ln -s {host} "$BENCHBOOK_TRACE_FILE"'
    result = run_case(_file_harness(script), _case())
    assert SECRET not in result.model_dump_json()
    assert result.status == "error" and result.error is not None
    assert result.error.startswith("the answer file cannot be read"), result.error


def test_a_python_harness_answer_past_16_mib_is_an_error(run_case: RunCase) -> None:
    harness = PythonHarness.model_validate(
        {
            "id": "p",
            "version": "1.0.0",
            "kind": "python",
            "config": {"callable": "tests.runtime.python_agents:oversized"},
        }
    )
    result = run_case(harness, _case())
    assert result.status == "error" and result.error is not None
    assert result.error.startswith("the answer is too large: 16,777,217 characters")
    assert result.trace.answer == ""


def test_the_bound_counts_utf8_bytes() -> None:
    assert answer_problem("é" * (ANSWER_LIMIT_BYTES // 2)) is None  # exactly 16 MiB
    problem = answer_problem("é" * (ANSWER_LIMIT_BYTES // 2) + "a")
    assert problem is not None and problem.startswith("the answer is too large: 16,777,217 bytes")
