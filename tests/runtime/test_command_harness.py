"""The ``command`` harness kind (SPEC H.1): real processes, real process groups."""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from benchbook.contracts.dataset import PromptEnv
from benchbook.contracts.harness import CommandHarness
from benchbook.contracts.run import CaseInput
from benchbook.errors import InvalidInput
from benchbook.runtime import RuntimeConfig
from benchbook.runtime.harnesses import check_harness_templates
from tests.procscan import wait_gone
from tests.runtime.runner import RunCase


@pytest.fixture
def runtime_config(runtime_config: RuntimeConfig) -> RuntimeConfig:
    """As a run of a harness an installation admin registered: its ``argv`` scripts are bound
    (``SandboxPolicy.argv_files``; the refusal otherwise: ``test_sandbox_argv_files.py``)."""
    return replace(runtime_config, sandbox=replace(runtime_config.sandbox, argv_files=True))


def _harness(argv: list[str], **config: Any) -> CommandHarness:
    return CommandHarness.model_validate(
        {"id": "cmd", "version": "1.0.0", "config": {"argv": argv, **config}}
    )


def _case(task: str = "What is 2+2?", **fields: Any) -> CaseInput:
    return CaseInput(case_id="c1", env=PromptEnv(), task=task, timeout_s=30, **fields)


def _script(tmp_path: Path, source: str) -> str:
    path = tmp_path / "agent.py"
    path.write_text(source)
    return str(path)


def test_a_command_harness_echoes_its_task_back_as_the_answer(run_case: RunCase) -> None:
    result = run_case(_harness(["echo", "case {case_id} sample {sample}: {task}"]), _case())
    assert result.status == "ok", result.error
    assert result.trace.answer == "case c1 sample 0: What is 2+2?"
    assert result.trace.started_at is not None and result.trace.started_at.tzinfo is not None
    assert result.trace.duration_ms >= 0


def test_the_task_arrives_on_stdin_and_literal_braces_stay_braces(run_case: RunCase) -> None:
    result = run_case(_harness(["sh", "-c", "printf '{{x}} '; cat"]), _case("stdin task"))
    assert result.trace.answer == "{x} stdin task"


def test_the_harness_sees_a_clean_environment_and_nothing_else(
    run_case: RunCase, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BENCHBOOK_LEAK_MARKER", "server-secret-7f3a")
    harness = _harness(
        [sys.executable, "-c", "import json, os; print(json.dumps(dict(os.environ)))"]
    )
    result = run_case(harness, _case())
    assert result.status == "ok", result.error
    env = json.loads(result.trace.answer)
    assert "BENCHBOOK_LEAK_MARKER" not in env
    assert "server-secret-7f3a" not in result.trace.answer
    workdir = env["BENCHBOOK_WORKDIR"]
    assert env["HOME"] == workdir
    assert env["BENCHBOOK_TASK"] == "What is 2+2?"
    allowed = {"PATH", "HOME", "LANG", "BENCHBOOK_TASK", "BENCHBOOK_CASE_FILE"}
    allowed |= {"BENCHBOOK_ANSWER_FILE", "BENCHBOOK_TRACE_FILE", "BENCHBOOK_WORKDIR"}
    # the interpreter itself may add LC_CTYPE, the sandbox sets PWD (the working directory);
    # nothing else of the server's environment
    assert env.get("PWD", workdir) == workdir
    assert set(env) - {"LC_CTYPE", "PWD"} == allowed


def test_the_case_file_holds_the_case_input_as_json(run_case: RunCase) -> None:
    harness = _harness(["sh", "-c", 'cat "$BENCHBOOK_CASE_FILE"'])
    case_input = _case(metadata={"difficulty": "easy"})
    result = run_case(harness, case_input)
    assert CaseInput.model_validate_json(result.trace.answer) == case_input


def test_a_harness_that_forks_and_sleeps_past_its_timeout_is_killed_with_its_whole_group(
    run_case: RunCase,
) -> None:
    # The subshell leaves a grandchild sleeping; a marker duration finds it in the host's /proc.
    marker = f"{60 + os.getpid() % 1000 / 1000:.3f}"
    script = f"(sleep {marker} &); sleep {marker}"
    started = time.monotonic()
    result = run_case(_harness(["sh", "-c", script], timeout_s=1), _case())
    assert time.monotonic() - started < 10
    assert result.status == "error"
    assert result.error == "timeout"
    assert wait_gone(f"sleep {marker}") == []


def test_a_non_zero_exit_is_an_error_that_keeps_the_answer_and_stderr(run_case: RunCase) -> None:
    script = "echo partial; echo first >&2; echo '  why it failed  ' >&2; echo >&2; exit 3"
    result = run_case(_harness(["sh", "-c", script]), _case())
    # stderr's last non-blank line names the cause in the run's error summary (a script that
    # could not be opened was "6 × exit code 2", the reason only in each trace)
    assert (result.status, result.error) == ("error", "exit code 3: why it failed")
    assert result.trace.answer == "partial"
    assert result.trace.stderr_tail == "first\n  why it failed  \n\n"
    quiet = run_case(_harness(["sh", "-c", "exit 4"]), _case())
    assert (quiet.status, quiet.error) == ("error", "exit code 4")
    long = run_case(_harness(["sh", "-c", "printf '%0300d' 0 >&2; exit 5"]), _case())
    assert long.error == "exit code 5: " + "0" * 199 + "…"


def test_only_the_tail_of_a_long_output_is_kept(run_case: RunCase, tmp_path: Path) -> None:
    config = RuntimeConfig(work_root=tmp_path / "w", mirrors=tmp_path / "m", tail_bytes=16)
    harness = _harness(["sh", "-c", "seq 1 5000; seq 1 5000 >&2"])
    result = run_case(harness, _case(), config=config)
    assert result.trace.stdout_tail == "4997\n4998\n4999\n5000\n"[-16:]
    assert len(result.trace.stderr_tail) == 16
    assert result.trace.answer.startswith("1\n2\n") and result.trace.answer.endswith("5000")


def test_answer_file_mode_reads_the_answer_file_not_stdout(run_case: RunCase) -> None:
    harness = _harness(
        ["sh", "-c", 'echo thinking...; printf " 42\\n" > "$BENCHBOOK_ANSWER_FILE"'],
        answer="file",
    )
    result = run_case(harness, _case())
    assert result.status == "ok", result.error
    assert result.trace.answer == "42"
    assert result.trace.stdout_tail == "thinking...\n"


def test_trace_events_are_parsed_and_a_bad_line_becomes_a_note(
    run_case: RunCase, tmp_path: Path
) -> None:
    script = _script(
        tmp_path,
        """
import json, os
lines = [
    json.dumps({"type": "message", "role": "user", "content": "hi"}),
    json.dumps({"type": "tool_call", "name": "search", "arguments": {"q": "x"}}),
    json.dumps({"type": "tool_result", "name": "search", "content": "found"}),
    json.dumps({"type": "usage", "input_tokens": 10, "output_tokens": 3, "model": "m-1"}),
    "{not json",
    json.dumps({"type": "usage", "input_tokens": 5, "output_tokens": 2}),
    json.dumps({"type": "weird"}),
]
with open(os.environ["BENCHBOOK_TRACE_FILE"], "w") as f:
    f.write("\\n".join(lines) + "\\n")
print("done")
""",
    )
    result = run_case(_harness([sys.executable, script]), _case())
    trace = result.trace
    assert result.status == "ok", result.error
    assert trace.messages == [{"role": "user", "content": "hi"}]
    assert trace.tool_calls == [{"name": "search", "arguments": {"q": "x"}}]
    assert (trace.usage.input_tokens, trace.usage.output_tokens, trace.model) == (15, 5, "m-1")
    assert [e["type"] for e in trace.events] == [
        "message",
        "tool_call",
        "tool_result",
        "usage",
        "note",
        "usage",
        "note",
    ]
    assert "line 5 is not valid JSON" in str(trace.events[4]["text"])
    assert "unknown type 'weird'" in str(trace.events[6]["text"])


def test_an_unknown_template_field_is_refused_naming_its_config_path() -> None:
    harness = _harness(["agent", "{answer}"])
    with pytest.raises(InvalidInput) as caught:
        check_harness_templates(harness)
    assert caught.value.message == (
        "config.argv[1]: unknown template field 'answer' (known: task, case_id, workdir, sample)"
    )


def test_template_errors_in_env_and_cwd_name_their_paths() -> None:
    with pytest.raises(InvalidInput, match=r"config\.env\.MODE: unknown template field 'gold'"):
        check_harness_templates(_harness(["agent"], env={"MODE": "{gold}"}))
    with pytest.raises(InvalidInput, match=r"config\.cwd: unmatched brace"):
        check_harness_templates(_harness(["agent"], cwd="{workdir"))
    check_harness_templates(_harness(["agent", "{task}", "{{literal}}"], cwd="{workdir}/sub"))


def test_a_missing_secret_is_an_error_naming_it_and_a_present_one_is_passed(
    run_case: RunCase,
) -> None:
    harness = _harness(["sh", "-c", 'printf %s "$API_TOKEN"'], secrets=["API_TOKEN"])
    missing = run_case(harness, _case())
    assert (missing.status, missing.error) == ("error", "missing secret API_TOKEN")
    present = run_case(harness, _case(), secrets={"API_TOKEN": "tok-123", "OTHER": "no"})
    assert present.status == "ok" and present.trace.answer == "tok-123"


def test_a_program_that_does_not_exist_is_an_error_not_an_exception(run_case: RunCase) -> None:
    result = run_case(_harness(["/nonexistent/agent"]), _case())
    assert result.status == "error"
    assert result.error is not None and result.error.startswith("cannot start /nonexistent/agent")


def test_env_and_cwd_templates_are_rendered(run_case: RunCase) -> None:
    harness = _harness(
        ["sh", "-c", 'printf "%s|%s" "$CASE" "$(pwd)"'],
        env={"CASE": "{case_id}-{sample}"},
        cwd="{workdir}",
    )
    result = run_case(harness, _case())
    case, cwd = result.trace.answer.split("|")
    assert case == "c1-0"
    assert Path(cwd).name == "work"


@pytest.mark.parametrize("field", ["task", "case_id"])
def test_a_path_filled_in_from_case_data_is_never_bound_into_the_sandbox(
    run_case: RunCase, tmp_path: Path, field: str
) -> None:
    # Task text and case ids are member-written: a path in them must not become a read-only
    # bind (only the registered argv's own literal paths are), or a member reads any file the
    # server's user can read.
    secret = tmp_path / "outside" / "akey"
    secret.parent.mkdir()
    secret.write_text("server-secret-91c2")
    reader = "import sys; print(open(sys.argv[1]).read())"
    harness = _harness(["python3", "-c", reader, "{" + field + "}"])
    case_input = _case(str(secret)) if field == "task" else _case()
    if field == "case_id":
        case_input = case_input.model_copy(update={"case_id": str(secret)})
    result = run_case(harness, case_input)
    assert "server-secret-91c2" not in result.trace.answer
    assert result.status == "error" and result.error is not None
    assert result.error.startswith("exit code 1: FileNotFoundError")
    assert "server-secret-91c2" not in result.error
    assert "FileNotFoundError" in result.trace.stderr_tail


def test_a_literal_script_path_in_the_registered_argv_is_still_bound(
    run_case: RunCase, tmp_path: Path
) -> None:
    script = _script(tmp_path, "import sys; print('ran', sys.argv[1])")
    result = run_case(_harness(["python3", script, "{task}"]), _case("hello"))
    assert (result.status, result.error) == ("ok", None)
    assert result.trace.answer == "ran hello"
