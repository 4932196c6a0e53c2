"""A trace's conversation as the case page shows it: each turn with its tool calls folded.

An ``agent`` harness's trace holds the chat messages (assistant messages carry ``tool_calls``,
each answered by a ``tool`` message), its ``tool_calls`` records (arguments, result, exit code,
duration) and one ``model_call`` event per request (tokens, latency, cost). The page reads
them as turns: the system and user messages, then per step the assistant's text with each call
folded in a ``<details>`` holding its arguments and result — the ``tool`` messages are not
repeated on their own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import JsonValue

from benchbook.contracts.run import Trace


@dataclass
class ToolCallView:
    """One folded call: ``name``, ``arguments`` (as the model sent them), ``result`` (the text
    the model read), ``ok``, ``exit_code``, ``duration_ms``, ``timed_out``, ``cut_bytes``."""

    name: str
    arguments: JsonValue
    result: str
    ok: bool | None = None
    exit_code: int | None = None
    duration_ms: int | None = None
    timed_out: bool = False
    cut_bytes: int = 0

    @property
    def preview(self) -> str:
        """The first line of the call's first string argument (a command, a path), ≤ 80
        characters — what the folded summary shows."""
        values = self.arguments.values() if isinstance(self.arguments, dict) else []
        text = next((v for v in values if isinstance(v, str)), "")
        line = text.strip().split("\n", 1)[0]
        return line if len(line) <= 80 else line[:79] + "…"


@dataclass
class Turn:
    """One message of the conversation; ``step`` the ``model_call`` event of an assistant
    reply (``input_tokens``, ``output_tokens``, ``latency_ms``, ``cost_usd``?)."""

    role: str
    content: JsonValue
    calls: list[ToolCallView] = field(default_factory=list)
    step: dict[str, JsonValue] | None = None


def is_conversation(trace: Trace) -> bool:
    """The trace holds a tool-calling conversation (an assistant message with tool calls)."""
    return any(m.get("role") == "assistant" and m.get("tool_calls") for m in trace.messages)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def conversation(trace: Trace) -> list[Turn]:
    """The turns of ``trace`` (module docstring); tool results come from the ``tool`` messages,
    the exit codes and durations from ``trace.tool_calls`` (matched by call id)."""
    records = {str(r.get("id")): r for r in trace.tool_calls if r.get("id") is not None}
    answers = {
        str(m.get("tool_call_id")): m.get("content")
        for m in trace.messages
        if m.get("role") == "tool"
    }
    steps = [e for e in trace.events if e.get("type") == "model_call"]
    turns: list[Turn] = []
    replies = 0
    for message in trace.messages:
        role = str(message.get("role", "message"))
        if role == "tool":
            continue
        turn = Turn(role=role, content=message.get("content"))
        if role == "assistant":
            turn.step = steps[replies] if replies < len(steps) else None
            replies += 1
        for call in message.get("tool_calls") or []:  # type: ignore[union-attr]
            if isinstance(call, dict):
                turn.calls.append(_call_view(call, records, answers))
        turns.append(turn)
    return turns


def _call_view(
    call: dict[str, JsonValue],
    records: dict[str, dict[str, JsonValue]],
    answers: dict[str, JsonValue],
) -> ToolCallView:
    function = call.get("function")
    function = function if isinstance(function, dict) else {}
    call_id = str(call.get("id"))
    record = records.get(call_id, {})
    ok = record.get("ok")
    return ToolCallView(
        name=str(function.get("name") or record.get("name") or "call"),
        arguments=record.get("arguments", function.get("arguments")),
        result=str(answers.get(call_id, record.get("result", "")) or ""),
        ok=ok if isinstance(ok, bool) else None,
        exit_code=_int(record.get("exit_code")),
        duration_ms=_int(record.get("duration_ms")),
        timed_out=record.get("timed_out") is True,
        cut_bytes=_int(record.get("cut_bytes")) or 0,
    )
