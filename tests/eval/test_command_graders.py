"""The workspace graders (SPEC H.5): ``command`` and ``tests-pass`` run in the case workdir."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest

from benchbook.contracts import Case, GraderSpec
from benchbook.contracts.run import Trace
from benchbook.contracts.score import Score
from benchbook.eval.graders.command import grade_command, grade_tests_pass, parse_test_counts
from benchbook.eval.grading import Submission

CASE = Case(id="c", env={"kind": "prompt"}, task="t")


def _command(
    workdir: Path | None, case: Case = CASE, grader: str = "command", **config: object
) -> Score:
    spec = GraderSpec.model_validate({"id": grader, "config": config})
    sub = Submission(answer="", trace=Trace(), workdir=workdir)
    run = grade_command if grader == "command" else grade_tests_pass
    return asyncio.run(run(spec, sub, case))


def test_a_command_that_exits_zero_passes(tmp_path: Path) -> None:
    score = _command(tmp_path, cmd="test -d .")
    assert score.passed is True and score.detail["exit_code"] == 0


def test_a_failing_command_fails_with_its_exit_code_and_output_tails(tmp_path: Path) -> None:
    score = _command(tmp_path, cmd="echo checked; echo boom >&2; exit 3")
    assert score.status == "ok" and score.passed is False
    assert score.detail["exit_code"] == 3
    assert score.detail["stdout_tail"] == "checked\n" and score.detail["stderr_tail"] == "boom\n"


def test_an_argv_command_runs_without_a_shell(tmp_path: Path) -> None:
    ok = _command(tmp_path, argv=[sys.executable, "-c", "import sys; sys.exit(0)"])
    bad = _command(tmp_path, argv=[sys.executable, "-c", "import sys; sys.exit(2)"])
    assert (ok.passed, bad.passed) == (True, False)


def test_a_pass_pattern_decides_instead_of_the_exit_code(tmp_path: Path) -> None:
    matched = _command(tmp_path, cmd="echo 'ALL GOOD'; exit 1", pass_pattern="^ALL GOOD$")
    missed = _command(tmp_path, cmd="echo 'all good?'", pass_pattern="^ALL GOOD$")
    in_stderr = _command(tmp_path, cmd="echo 'ALL GOOD' >&2; exit 1", pass_pattern="^ALL GOOD$")
    assert (matched.passed, missed.passed, in_stderr.passed) == (True, False, True)


def test_the_command_runs_in_the_workdir_with_a_clean_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BENCHBOOK_SECRET_MARKER", "leak-me-not")
    score = _command(tmp_path, cmd="pwd; env")
    out = str(score.detail["stdout_tail"])
    assert out.splitlines()[0] == str(tmp_path)
    names = {line.split("=", 1)[0] for line in out.splitlines()[1:] if "=" in line}
    assert "leak-me-not" not in out
    assert names <= {"PATH", "HOME", "LANG", "PWD", "SHLVL", "_"}  # the last three: the shell's
    assert f"HOME={tmp_path}" in out


def _group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes whose process group is ``pgid``."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_a_timeout_is_an_error_and_kills_the_whole_process_group(tmp_path: Path) -> None:
    cmd = "echo $$ > group; sleep 60 >/dev/null 2>&1 & echo $! > grandchild; wait"
    started = time.monotonic()
    score = _command(tmp_path, cmd=cmd, timeout_s=0.5)
    assert time.monotonic() - started < 10
    assert score.status == "error" and "timed out" in str(score.detail["error"])
    pgid = int((tmp_path / "group").read_text())
    grandchild = int((tmp_path / "grandchild").read_text())
    deadline = time.monotonic() + 5
    while _group_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _group_members(pgid) == []
    assert grandchild != pgid and pgid != os.getpgid(0)


def test_without_a_workdir_a_workspace_grader_is_skipped() -> None:
    for grader in ("command", "tests-pass"):
        score = _command(None, grader=grader, cmd="true")
        assert score.status == "skipped" and score.passed is None
        assert "workspace is gone" in str(score.detail["reason"])


@pytest.mark.parametrize(
    "config",
    [
        {},
        {"cmd": "true", "argv": ["true"]},
        {"cmd": ""},
        {"argv": "true"},
        {"cmd": "true", "timeout_s": 0},
    ],
)
def test_a_malformed_command_config_is_an_error_score(tmp_path: Path, config: dict) -> None:
    score = _command(tmp_path, **config)
    assert score.status == "error" and "bad config" in str(score.detail["error"])


def test_a_bad_pass_pattern_is_an_error_score(tmp_path: Path) -> None:
    score = _command(tmp_path, cmd="true", pass_pattern="(")
    assert score.status == "error"


def test_tests_pass_takes_the_command_from_case_metadata_and_parses_the_counts(
    tmp_path: Path,
) -> None:
    summary = "=== 3 passed, 1 failed, 2 skipped, 1 warning in 0.12s ==="
    case = Case(
        id="c",
        env={"kind": "prompt"},
        task="t",
        metadata={"test_cmd": f"echo 'test_x FAILED'; echo '{summary}'; exit 1"},
    )
    score = _command(tmp_path, case=case, grader="tests-pass")
    assert score.status == "ok" and score.passed is False and score.detail["exit_code"] == 1
    assert score.detail["counts"] == {"passed": 3, "failed": 1, "skipped": 2, "warnings": 1}


def test_tests_pass_reads_a_named_metadata_field_or_its_own_cmd(tmp_path: Path) -> None:
    case = Case(id="c", env={"kind": "prompt"}, task="t", metadata={"check": ["true"]})
    assert _command(tmp_path, case=case, grader="tests-pass", cmd_field="check").passed is True
    assert _command(tmp_path, grader="tests-pass", cmd="echo '2 passed in 1s'").detail[
        "counts"
    ] == {"passed": 2}
    missing = _command(tmp_path, case=case, grader="tests-pass")
    assert missing.status == "error" and "test_cmd" in str(missing.detail["error"])


def test_pytest_counts_come_from_the_last_summary_line() -> None:
    out = "collected 5 items\n1 passed earlier\n==== 1 failed, 4 passed, 2 errors in 3.1s ===="
    assert parse_test_counts(out) == {"failed": 1, "passed": 4, "errors": 2}
    assert parse_test_counts("Ran 3 tests\nOK") == {}
