"""The ``openai`` harness against a local OpenAI-compatible server over real HTTP (SPEC H.1)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from benchbook.contracts.dataset import PromptEnv
from benchbook.contracts.harness import OpenAIHarness
from benchbook.contracts.run import CaseInput, RuntimeResult
from benchbook.runtime.environments import Workspace
from benchbook.runtime.harnesses.openai_compat import run_openai
from tests.openaiserver import OpenAIServer


def _harness(server: OpenAIServer, **config: Any) -> OpenAIHarness:
    return OpenAIHarness.model_validate(
        {
            "id": "chat",
            "version": "1.0.0",
            "config": {"base_url": server.url, "model": "test-model", **config},
        }
    )


def _run(
    harness: OpenAIHarness,
    tmp_path: Path,
    *,
    task: str = "What is 2+2?",
    context: str | None = None,
    timeout_s: int = 30,
    secrets: dict[str, str] | None = None,
) -> RuntimeResult:
    case_input = CaseInput(
        case_id="c1", env=PromptEnv(context=context), task=task, timeout_s=timeout_s
    )
    workspace = Workspace(workdir=tmp_path, env_vars={}, error=None)
    return asyncio.run(run_openai(harness, case_input, workspace, secrets or {}))


def test_the_reply_becomes_the_answer_and_its_usage_is_recorded(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.set_rules([(r"2\+2", "The answer is 4")], default="no idea")
    result = _run(_harness(openai_server, system="Be brief."), tmp_path)
    assert result.status == "ok" and result.error is None
    trace = result.trace
    assert trace.answer == "The answer is 4"
    # whitespace tokens: "Be brief." (2) + "What is 2+2?" (3); reply 4
    assert (trace.usage.input_tokens, trace.usage.output_tokens) == (5, 4)
    assert trace.model == "test-model"
    assert trace.started_at is not None and trace.started_at.utcoffset() is not None
    assert trace.messages[-1] == {"role": "assistant", "content": "The answer is 4"}


def test_the_server_receives_the_system_message_context_task_and_options(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    harness = _harness(
        openai_server, system="You are terse.", temperature=0.5, extra_body={"seed": 7}
    )
    _run(harness, tmp_path, task="Name the capital.", context="Country: France")
    (body,) = openai_server.requests
    assert body["model"] == "test-model"
    assert body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Country: France\n\nName the capital."},
    ]
    assert body["temperature"] == 0.5 and body["seed"] == 7
    assert "max_tokens" not in body  # unset options are not sent


def test_a_rate_limit_with_retry_after_is_retried_by_the_client(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.reply = lambda body: "finally"
    openai_server.fail_next(2, status=429, retry_after_s=0.01)
    result = _run(_harness(openai_server, max_retries=2), tmp_path)
    assert result.status == "ok" and result.trace.answer == "finally"
    assert openai_server.call_count == 3


def test_a_persistent_server_error_is_an_error_result_not_an_exception(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.fail_next(10, status=500, retry_after_s=0.01)
    result = _run(_harness(openai_server, max_retries=1), tmp_path)
    assert result.status == "error"
    assert result.error is not None
    assert result.error.startswith("openai: 500 Internal Server Error")
    assert "The server had an error" in result.error
    assert openai_server.call_count == 2  # the first try and one retry


def test_a_missing_api_key_secret_is_an_error_naming_it(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    harness = _harness(openai_server, api_key_secret="OPENAI_KEY")
    result = _run(harness, tmp_path, secrets={"OTHER": "x"})
    assert (result.status, result.error) == ("error", "missing secret OPENAI_KEY")
    assert openai_server.call_count == 0


def test_the_api_key_secret_is_sent_as_the_bearer_token(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.api_key = "sk-test"
    harness = _harness(openai_server, api_key_secret="OPENAI_KEY")
    assert _run(harness, tmp_path, secrets={"OPENAI_KEY": "sk-test"}).status == "ok"
    assert openai_server.request_headers[0]["authorization"] == "Bearer sk-test"


def test_a_reply_slower_than_the_case_timeout_is_a_timeout(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.delay_s = 1.6
    result = _run(_harness(openai_server), tmp_path, timeout_s=1)
    assert (result.status, result.error) == ("error", "timeout")
    assert 900 <= result.trace.duration_ms < 1500


def test_three_hundred_concurrent_cases_each_get_their_own_answer(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.reply = lambda body: body["messages"][-1]["content"].upper()
    harness = _harness(openai_server)
    workspace = Workspace(workdir=tmp_path, env_vars={}, error=None)

    async def run_all() -> list[RuntimeResult]:
        semaphore = asyncio.Semaphore(16)

        async def one(i: int) -> RuntimeResult:
            case_input = CaseInput(case_id=f"c{i}", env=PromptEnv(), task=f"case {i}")
            async with semaphore:
                return await run_openai(harness, case_input, workspace, {})

        return await asyncio.gather(*(one(i) for i in range(300)))

    results = asyncio.run(run_all())
    assert [r.trace.answer for r in results] == [f"CASE {i}" for i in range(300)]
    assert openai_server.call_count == 300


def test_run_harness_sends_an_openai_harness_to_its_endpoint(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    from benchbook.runtime import run_harness

    openai_server.reply = lambda body: "via run_harness"
    case_input = CaseInput(case_id="c1", env=PromptEnv(), task="hello")
    workspace = Workspace(workdir=tmp_path)
    result = asyncio.run(run_harness(_harness(openai_server), case_input, workspace, {}))
    assert (result.status, result.trace.answer) == ("ok", "via run_harness")
    assert openai_server.call_count == 1


def test_the_reply_note_names_the_completion_the_served_model_and_the_finish_reason(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.reply = lambda body: "one two three"
    result = _run(_harness(openai_server, max_tokens=1), tmp_path)
    assert result.trace.answer == "one"
    [note] = result.trace.events
    assert note["type"] == "note" and str(note["id"]).startswith("chatcmpl-test")
    assert (note["served_model"], note["finish_reason"]) == ("test-model", "length")


def test_extra_body_is_merged_last_as_the_client_merges_it(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    harness = _harness(openai_server, temperature=0.5, extra_body={"temperature": 0.9, "n": 1})
    assert _run(harness, tmp_path).status == "ok"
    (body,) = openai_server.requests
    assert (body["temperature"], body["n"]) == (0.9, 1)


def _completion(**changes: Any) -> dict[str, Any]:
    message = {"role": "assistant", "content": "4"}
    body: dict[str, Any] = {
        "id": "c-1",
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1},
    }
    return {**body, **changes}


def test_a_reply_that_is_not_a_chat_completion_is_an_error_saying_what_is_wrong() -> None:
    from benchbook.runtime.harnesses.openai_compat import read_reply

    answer, usage, note = read_reply(_completion())  # type: ignore[misc]
    assert (answer, usage.input_tokens, usage.output_tokens) == ("4", 3, 1)
    assert note == {"type": "note", "id": "c-1", "served_model": "m", "finish_reason": "stop"}
    no_usage = read_reply(_completion(usage=None))
    assert not isinstance(no_usage, str) and no_usage[1].input_tokens == 0
    null_content = [{"message": {"role": "assistant", "content": None}}]
    assert read_reply(_completion(choices=null_content))[0] == ""
    wrong = "openai: the reply is not a chat completion: "
    assert read_reply("<html>busy</html>") == wrong + "'<html>busy</html>'"
    assert read_reply(_completion(choices=[])) == "openai: the reply has no choices"
    assert read_reply(_completion(choices={"0": {}})) == "openai: the reply has no choices"
    parts = [{"message": {"role": "assistant", "content": [{"type": "text"}]}}]
    assert read_reply(_completion(choices=parts)) == (
        wrong + "choices[0].message.content is not text"
    )
    assert read_reply(_completion(choices=["x"])) == (
        wrong + "choices[0].message.content is not text"
    )
    bad_usage = {"prompt_tokens": -1, "completion_tokens": 1}
    assert read_reply(_completion(usage=bad_usage)) == wrong + f"usage is {bad_usage!r}"
    assert read_reply(_completion(usage=[1])) == wrong + "usage is [1]"
