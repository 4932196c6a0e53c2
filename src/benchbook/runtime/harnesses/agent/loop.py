"""The ``agent`` harness's loop: chat completions with tools until ``submit`` or a limit.

The standard tool-calling loop of the OpenAI chat-completions API through the official
``openai`` client: each step sends the conversation and the tool schemas; the reply's tool calls
(several at once allowed — parallel tool calls) run in order, each answered by a ``tool``
message carrying its ``tool_call_id``. A reply without tool calls gets a user message asking the
model to go on and call ``submit``. The case ends when the model calls ``submit(answer)`` (the
answer is the case's) or at a limit (:mod:`.limits`): then the trace's ``limit`` says which and
the answer is empty. A failed model request is the case's error (``openai: …``, described by
:func:`~benchbook.runtime.harnesses.openai_compat.describe_openai_error`).

The trace keeps the whole conversation (``messages``), every tool call with its arguments,
result, exit code and duration (``tool_calls``), and a ``model_call`` event per request with its
tokens and latency (priced per step in the evaluation layer).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson
from openai.types.chat import ChatCompletion, ChatCompletionMessageToolCallUnion
from pydantic import JsonValue

from benchbook.contracts.harness import AgentHarness
from benchbook.contracts.run import AgentLimit, CaseInput, RuntimeResult, Trace
from benchbook.runtime.egress import SecretHostRefused, secret_for
from benchbook.runtime.environments import Workspace
from benchbook.runtime.harnesses.agent.limits import Budget
from benchbook.runtime.harnesses.agent.outcome import ToolOutcome
from benchbook.runtime.harnesses.agent.prompts import first_messages
from benchbook.runtime.harnesses.agent.tools import (
    check_arguments,
    offered_tools,
    run_tool,
    tool_schemas,
)
from benchbook.runtime.harnesses.openai_compat import describe_openai_error, openai_client
from benchbook.runtime.sandbox import SandboxLimits, limits_for

#: The user message after a reply without tool calls.
NUDGE = "Continue with the task using the tools. When you are done, call submit(answer)."


class _Submitted(Exception):
    def __init__(self, answer: str) -> None:
        self.answer = answer


@dataclass
class _Case:
    """One case's loop state: the harness, its workspace and tools, the trace being written,
    the budget, the sandbox's resource limits and the chat-completions request options."""

    harness: AgentHarness
    workspace: Workspace
    tools: list[str]
    trace: Trace
    budget: Budget
    limits: SandboxLimits
    client: Any
    request: dict[str, Any]


async def run_agent(
    harness: AgentHarness,
    case_input: CaseInput,
    workspace: Workspace,
    secrets: Mapping[str, str],
) -> RuntimeResult:
    """Run one (case, sample) through the tool-calling loop (module docstring).

    Returns:
        ``ok`` with the submitted answer, or ``ok`` with ``trace.limit`` set and no answer when a
        limit ended it; ``error`` with ``missing secret NAME`` or ``openai: …`` when a model
        request failed. Never raises for the model's or a tool's failure.
    """
    config = harness.config
    trace = Trace(model=config.model, started_at=datetime.now(UTC))
    started = time.monotonic()
    api_key = "EMPTY"
    if config.api_key_secret:
        if config.api_key_secret not in secrets:
            return RuntimeResult(
                status="error", error=f"missing secret {config.api_key_secret}", trace=trace
            )
        try:  # right before the calls: the key goes only to a host it is bound to
            api_key = secret_for(secrets, config.api_key_secret, str(config.base_url))
        except SecretHostRefused as exc:
            return RuntimeResult(status="error", error=str(exc), trace=trace)
    tools: list[str] = list(offered_tools(config, workspace.kind))
    trace.messages = first_messages(config.system, case_input, tools)
    state = _Case(
        harness=harness,
        workspace=workspace,
        tools=tools,
        trace=trace,
        budget=Budget.of(config, case_input.timeout_s),
        limits=_limits(workspace, case_input),
        client=openai_client(config.base_url, api_key, config.max_retries, config.timeout_s),
        request=_request_options(harness, tools),
    )
    error: str | None = None
    try:
        error = await _loop(state)
    except _Submitted as done:
        trace.answer = done.answer
    trace.duration_ms = int((time.monotonic() - started) * 1000)
    if error is not None:
        return RuntimeResult(status="error", error=error, trace=trace)
    return RuntimeResult(status="ok", trace=trace)


def _limits(workspace: Workspace, case_input: CaseInput) -> SandboxLimits:
    """The sandbox's limits narrowed by the case's ``resources`` (as for command harnesses)."""
    resources = case_input.resources
    return limits_for(
        workspace.sandbox,
        timeout_s=case_input.timeout_s,
        cpu_millicores=resources.cpu_millicores if resources else None,
        memory_mb=resources.memory_mb if resources else None,
    )


def _request_options(harness: AgentHarness, tools: list[str]) -> dict[str, Any]:
    """Everything of a request but the messages; unset options are left out."""
    config = harness.config
    request: dict[str, Any] = {"model": config.model, "tools": tool_schemas(tools)}
    if config.temperature is not None:
        request["temperature"] = config.temperature
    if config.max_tokens is not None:
        request["max_tokens"] = config.max_tokens
    if config.extra_body:
        request["extra_body"] = dict(config.extra_body)
    return request


def _stop(trace: Trace, limit: AgentLimit) -> None:
    trace.limit = limit
    trace.events.append({"type": "note", "text": f"limit reached: {limit}"})


async def _loop(state: _Case) -> str | None:
    """Steps until a limit (sets ``trace.limit``; returns None) or a failed request (returns
    the error); ``submit`` raises :class:`_Submitted`."""
    trace = state.trace
    while True:
        limit = state.budget.before_request(len(trace.messages))
        if limit is not None:
            _stop(trace, limit)
            return None
        reply = await _request(state)
        if reply == "time":
            _stop(trace, "time")
            return None
        if isinstance(reply, str):
            return reply
        message = reply.choices[0].message
        calls = list(message.tool_calls or [])
        assistant: dict[str, JsonValue] = {"role": "assistant", "content": message.content}
        if calls:
            assistant["tool_calls"] = [orjson.loads(c.model_dump_json()) for c in calls]
        trace.messages.append(assistant)
        if not calls:
            trace.messages.append({"role": "user", "content": NUDGE})
            continue
        for call in calls:
            await _call(state, call)


async def _request(state: _Case) -> ChatCompletion | str:
    """One model request: the completion, ``"time"`` when the deadline passed during it, or
    the error text."""
    trace, budget = state.trace, state.budget
    step = budget.steps + 1
    began = time.monotonic()
    try:
        completion: ChatCompletion = await asyncio.wait_for(
            state.client.chat.completions.create(messages=trace.messages, **state.request),
            timeout=max(budget.remaining_s(), 0.001),
        )
    except TimeoutError:
        return "time"
    except Exception as exc:  # any failure of the endpoint is the case's result, not a crash
        return describe_openai_error(exc)
    latency_ms = int((time.monotonic() - began) * 1000)
    budget.steps = step
    if not completion.choices:
        return "openai: the reply has no choices"
    usage = completion.usage
    input_tokens = usage.prompt_tokens if usage else 0
    output_tokens = usage.completion_tokens if usage else 0
    trace.usage.input_tokens += input_tokens
    trace.usage.output_tokens += output_tokens
    budget.tokens += input_tokens + output_tokens
    trace.events.append(
        {
            "type": "model_call",
            "step": step,
            "id": completion.id,
            "served_model": completion.model,
            "finish_reason": completion.choices[0].finish_reason,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "latency_ms": latency_ms,
        }
    )
    return completion


async def _call(state: _Case, call: ChatCompletionMessageToolCallUnion) -> None:
    """Run one tool call, answer it with a ``tool`` message and record it in the trace.

    Raises:
        _Submitted: the call is a valid ``submit``.
    """
    trace, budget, config = state.trace, state.budget, state.harness.config
    problem: str | None
    if call.type == "function":
        name, raw = call.function.name, call.function.arguments or "{}"
    else:  # a custom (free-text) tool call: no tool of ours takes one
        name, raw = call.custom.name, call.custom.input
    record: dict[str, JsonValue] = {"id": call.id, "name": name, "step": budget.steps}
    try:
        arguments: Any = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        arguments, problem = raw, f"the arguments are not valid JSON: {exc}"
    else:
        problem = _problem(name, arguments, state.tools)
    record["arguments"] = arguments
    if problem is not None:
        outcome = ToolOutcome(False, f"error: {problem}")
    elif name == "submit":
        record.update(result="submitted", ok=True)
        trace.tool_calls.append(record)
        trace.messages.append({"role": "tool", "tool_call_id": call.id, "content": "submitted"})
        raise _Submitted(arguments["answer"])
    elif budget.remaining_s() <= 0:
        outcome = ToolOutcome(False, "error: not run: the time limit was reached")
    else:
        timeout_s = min(float(config.tool_timeout_s), budget.remaining_s())
        outcome = await run_tool(name, arguments, state.workspace, config, timeout_s, state.limits)
    record.update(
        result=outcome.content,
        ok=outcome.ok,
        exit_code=outcome.exit_code,
        duration_ms=outcome.duration_ms,
    )
    if outcome.cut_bytes:
        record.update(output_bytes=outcome.output_bytes, cut_bytes=outcome.cut_bytes)
    if outcome.timed_out:
        record["timed_out"] = True
    trace.tool_calls.append(record)
    trace.messages.append({"role": "tool", "tool_call_id": call.id, "content": outcome.content})


def _problem(name: str, arguments: object, tools: list[str]) -> str | None:
    if name not in tools:
        return f"unknown tool {name!r}; the tools are {', '.join(tools)}"
    return check_arguments(name, arguments)
