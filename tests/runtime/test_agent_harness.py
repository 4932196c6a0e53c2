"""The ``agent`` harness (issue 33) against the scripted local OpenAI-compatible server: the
tool-calling loop, its tools in the case's sandbox, limits, and what the trace keeps."""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from benchbook.contracts.dataset import PromptEnv
from benchbook.contracts.harness import AgentHarness
from benchbook.contracts.run import CaseInput, RuntimeResult
from benchbook.runtime.harnesses.agent.process import HeadTail
from tests.openaiserver import OpenAIServer, parallel, script, tool_call
from tests.runtime.runner import RunCase


def agent(server: OpenAIServer, **config: Any) -> AgentHarness:
    return AgentHarness.model_validate(
        {
            "id": "agent",
            "version": "1.0.0",
            "config": {"base_url": server.url, "model": "test-model", "max_steps": 10, **config},
        }
    )


def case(task: str = "What is 6 * 7?", timeout_s: int = 60) -> CaseInput:
    return CaseInput(case_id="c1", env=PromptEnv(), task=task, timeout_s=timeout_s)


def tool_results(result: RuntimeResult) -> list[str]:
    return [str(m["content"]) for m in result.trace.messages if m["role"] == "tool"]


def test_a_submit_only_reply_is_the_answer_with_usage_and_one_model_call(
    openai_server: OpenAIServer, run_case: RunCase
) -> None:
    openai_server.reply = script([tool_call("submit", answer="42")])
    result = run_case(agent(openai_server), case())
    assert (result.status, result.trace.answer, result.trace.limit) == ("ok", "42", None)
    (body,) = openai_server.requests
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert body["messages"][1]["content"] == "What is 6 * 7?"
    assert "submit(answer)" in body["messages"][0]["content"]
    names = [t["function"]["name"] for t in body["tools"]]
    assert names == ["bash", "python", "read_file", "write_file", "edit_file", "list_dir", "submit"]
    (event,) = [e for e in result.trace.events if e["type"] == "model_call"]
    assert event["step"] == 1 and event["input_tokens"] == result.trace.usage.input_tokens > 0
    assert isinstance(event["latency_ms"], int) and result.trace.model == "test-model"
    assert result.trace.tool_calls == [
        {
            "id": "call_000001_0",
            "name": "submit",
            "step": 1,
            "arguments": {"answer": "42"},
            "result": "submitted",
            "ok": True,
        }
    ]


def test_parallel_bash_and_python_calls_run_in_the_sandbox_and_answer_each_call_id(
    openai_server: OpenAIServer, run_case: RunCase
) -> None:
    openai_server.reply = script(
        [
            parallel(
                tool_call("bash", command="id -u; echo $HOME; pwd; exit 3"),
                tool_call("python", code="import os; print(sorted(os.environ))"),
            ),
            tool_call("submit", answer="done"),
        ]
    )
    result = run_case(agent(openai_server), case())
    assert result.status == "ok" and result.trace.answer == "done"
    bash, python = result.trace.tool_calls[:2]
    assert bash["exit_code"] == 3 and bash["ok"] is False
    uid, home, cwd = str(bash["result"]).splitlines()[1:4]
    assert uid == "65534"  # the sandbox's unprivileged uid, not the server's
    assert home == cwd and cwd.endswith("/work")
    assert python["exit_code"] == 0
    assert "['HOME', 'LANG', 'PATH'" in str(python["result"])  # nothing of the server's env
    assert isinstance(bash["duration_ms"], int)
    # the second request carries both tool messages, answered by id (the server checks it)
    second = openai_server.requests[1]["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool", "tool"]
    assert [m["tool_call_id"] for m in second[3:]] == ["call_000001_0", "call_000001_1"]


def test_file_tools_write_read_edit_and_list_inside_the_workspace(
    openai_server: OpenAIServer, run_case: RunCase
) -> None:
    openai_server.reply = script(
        [
            tool_call("write_file", path="pkg/calc.py", content="def f():\n    return 1 + 1\n"),
            tool_call("edit_file", path="pkg/calc.py", old_str="1 + 1", new_str="6 * 7"),
            tool_call("edit_file", path="pkg/calc.py", old_str="nowhere", new_str="x"),
            tool_call("read_file", path="pkg/calc.py", start_line=2, end_line=2),
            tool_call("list_dir", path="pkg"),
            tool_call("bash", command="python3 -c 'import pkg.calc as c; print(c.f())'"),
            tool_call("submit", answer="42"),
        ]
    )
    result = run_case(agent(openai_server), case())
    wrote, edited, missed, read, listed, ran = tool_results(result)[:6]
    assert wrote == "wrote 26 bytes to pkg/calc.py"
    assert edited == "edited pkg/calc.py at line 2"
    assert missed == "error: old_str must occur exactly once in pkg/calc.py; it occurs 0 times"
    assert read == "     2\t    return 6 * 7"
    assert listed == "calc.py  (26 bytes)"
    assert ran == "exit code 0\n42\n"
    oks = [t["ok"] for t in result.trace.tool_calls]
    assert oks == [True, True, False, True, True, True, True]


@pytest.mark.parametrize(
    "call",
    [
        tool_call("read_file", path="../../../../etc/hostname"),
        tool_call("read_file", path="/etc/passwd"),
        tool_call("read_file", path="up/etc/passwd"),  # a symlink the agent made to /
        tool_call("write_file", path="../escaped.txt", content="x"),
        tool_call("write_file", path="up/tmp/escaped.txt", content="x"),
        tool_call("list_dir", path=".."),
    ],
)
def test_a_file_tool_that_escapes_the_workspace_is_refused(
    openai_server: OpenAIServer, run_case: RunCase, call: Any, tmp_path: Path
) -> None:
    openai_server.reply = script(
        [tool_call("bash", command="ln -s / up"), call, tool_call("submit", answer="x")]
    )
    result = run_case(agent(openai_server), case())
    refused = tool_results(result)[1]
    assert refused.startswith("error: refused: ") and "is outside the workspace" in refused
    assert result.trace.tool_calls[1]["ok"] is False
    assert not list(tmp_path.rglob("escaped.txt"))


def test_bad_calls_are_answered_with_errors_and_the_loop_goes_on(
    openai_server: OpenAIServer, run_case: RunCase
) -> None:
    openai_server.reply = script(
        [
            tool_call("bash", "{not json"),
            tool_call("rm_rf", path="/"),
            tool_call("bash", cmd="ls"),
            tool_call("read_file", path="x", start_line="1"),
            "I think I am done.",  # no tool call: nudged to submit
            tool_call("submit", answer="ok"),
        ]
    )
    result = run_case(agent(openai_server), case())
    assert result.status == "ok" and result.trace.answer == "ok"
    bad_json, unknown, wrong_name, wrong_type, submitted = tool_results(result)
    assert submitted == "submitted"
    assert bad_json.startswith("error: the arguments are not valid JSON")
    assert unknown.startswith("error: unknown tool 'rm_rf'; the tools are bash, python")
    assert wrong_name == "error: missing argument(s): command"
    assert wrong_type == "error: start_line must be an integer ≥ 1"
    nudge = openai_server.requests[-1]["messages"][-1]
    assert nudge["role"] == "user" and "submit(answer)" in str(nudge["content"])


def test_a_model_that_never_submits_ends_at_max_steps_as_a_limit_not_an_error(
    openai_server: OpenAIServer, run_case: RunCase
) -> None:
    openai_server.reply = script([tool_call("bash", command="echo again")])
    result = run_case(agent(openai_server, max_steps=3), case())
    assert (result.status, result.error, result.trace.limit) == ("ok", None, "steps")
    assert result.trace.answer == "" and openai_server.call_count == 3
    assert len(result.trace.tool_calls) == 3


def test_the_token_limit_and_the_message_limit_end_the_case(
    openai_server: OpenAIServer, run_case: RunCase
) -> None:
    openai_server.reply = script([tool_call("bash", command="echo again")])
    tokens = run_case(agent(openai_server, token_limit=150), case())
    assert tokens.trace.limit == "tokens"
    assert tokens.trace.usage.input_tokens + tokens.trace.usage.output_tokens >= 150
    openai_server.reset()
    openai_server.reply = script([tool_call("bash", command="echo again")])
    messages = run_case(agent(openai_server, message_limit=6), case())
    assert messages.trace.limit == "messages" and openai_server.call_count == 2
    assert len(messages.trace.messages) == 6


def test_the_time_limit_kills_a_slow_tool_and_ends_the_case(
    openai_server: OpenAIServer, run_case: RunCase
) -> None:
    openai_server.reply = script([tool_call("bash", command="sleep 30; echo late")])
    started = time.monotonic()
    result = run_case(agent(openai_server, time_limit_s=2), case())
    assert time.monotonic() - started < 10
    assert (result.status, result.trace.limit) == ("ok", "time")
    (call,) = result.trace.tool_calls
    assert call["timed_out"] is True and call["exit_code"] is None
    assert "late" not in str(call["result"])


def test_a_tool_printing_100_mb_is_cut_head_and_tail_in_bounded_memory(
    openai_server: OpenAIServer, run_case: RunCase
) -> None:
    command = "echo START; head -c 100000000 /dev/zero | tr '\\0' a; echo; echo END"
    openai_server.reply = script(
        [tool_call("bash", command=command), tool_call("submit", answer="x")]
    )
    tracemalloc.start()
    try:
        result = run_case(agent(openai_server, tool_output_bytes=4096), case())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    call = result.trace.tool_calls[0]
    assert call["output_bytes"] == 100_000_000 + len("START\n\nEND\n")
    assert call["cut_bytes"] == call["output_bytes"] - 4096
    text = str(call["result"])
    assert text.startswith("exit code 0\nSTART\naaa") and text.endswith("aaa\nEND\n")
    assert "[… output cut: 99,995,915 of 100,000,011 bytes not shown" in text
    assert len(text) < 4096 + 200
    assert peak < 20_000_000, f"peak Python allocations {peak:,} bytes"


def test_head_tail_keeps_both_ends_of_a_stream() -> None:
    keep = HeadTail(10)
    for chunk in (b"abc", b"defgh", b"ijklmnop", b"qrstuvwxyz"):
        keep.feed(chunk)
        assert len(keep.head) + len(keep.tail) <= 5 + 2 * 5 + 10
    assert (
        keep.text() == "abcde\n[… output cut: 16 of 26 bytes not shown; the first and last"
        " parts are kept …]\nvwxyz"
    )
    short = HeadTail(10)
    short.feed(b"0123456789")
    assert (short.text(), short.cut_bytes) == ("0123456789", 0)


def test_a_failed_model_request_is_the_case_error_and_keeps_the_conversation(
    openai_server: OpenAIServer, run_case: RunCase
) -> None:
    openai_server.reply = script([tool_call("bash", command="echo hi")])
    openai_server.fail_next(1, status=200 + 200)  # the first request: 400, never retried
    result = run_case(agent(openai_server), case())
    assert result.status == "error" and result.error is not None
    assert result.error.startswith("openai: 400 Bad Request")
    assert [m["role"] for m in result.trace.messages] == ["system", "user"]


def test_a_missing_api_key_secret_sends_nothing(
    openai_server: OpenAIServer, run_case: RunCase
) -> None:
    result = run_case(agent(openai_server, api_key_secret="KEY"), case())
    assert (result.status, result.error) == ("error", "missing secret KEY")
    assert openai_server.call_count == 0


def test_what_bash_writes_outside_the_workspace_never_reaches_the_host(
    openai_server: OpenAIServer, run_case: RunCase, tmp_path: Path
) -> None:
    # Outside the workdir the sandbox is read-only system paths and a private tmpfs that dies
    # with the call: writes fail or land in that tmpfs.
    openai_server.reply = script(
        [
            tool_call("bash", command=f"touch ../escaped.txt {tmp_path}/escaped.txt; touch /usr/x"),
            tool_call("bash", command=f"ls ../escaped.txt {tmp_path}/escaped.txt"),
            tool_call("submit", answer="x"),
        ]
    )
    result = run_case(agent(openai_server), case())
    wrote, listed = result.trace.tool_calls[:2]
    assert "touch: cannot touch '/usr/x': Read-only file system" in str(wrote["result"])
    assert listed["exit_code"] == 2 and "No such file or directory" in str(listed["result"])
    assert not list(tmp_path.rglob("escaped.txt"))


def test_a_model_request_running_past_the_time_limit_ends_the_case(
    openai_server: OpenAIServer, run_case: RunCase
) -> None:
    openai_server.reply = script([tool_call("submit", answer="late")])
    openai_server.delay_s = 4
    started = time.monotonic()
    result = run_case(agent(openai_server, time_limit_s=1), case())
    assert time.monotonic() - started < 3.5
    assert (result.status, result.trace.limit, result.trace.answer) == ("ok", "time", "")


@pytest.mark.parametrize(("network", "reached"), [("none", False), ("full", True)])
def test_tools_reach_the_network_only_when_the_harness_says_full(
    openai_server: OpenAIServer, run_case: RunCase, network: str, reached: bool
) -> None:
    code = (
        "import urllib.request\n"
        f"try:\n    print(urllib.request.urlopen('{openai_server.url}/models').status)\n"
        "except OSError as exc:\n    print('unreachable', type(exc).__name__)\n"
    )
    openai_server.reply = script([tool_call("python", code=code), tool_call("submit", answer="x")])
    result = run_case(agent(openai_server, network=network), case())
    output = str(result.trace.tool_calls[0]["result"])
    assert (output == "exit code 0\n200\n") is reached, output
    assert ("unreachable" in output) is not reached
