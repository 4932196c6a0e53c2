"""Trace events a command harness writes to ``BENCHBOOK_TRACE_FILE`` (SPEC H.1, H.4).

One JSON object a line, ``{type: message|tool_call|tool_result|usage|note, ...}``. Every event is
kept in ``trace.events``; ``message`` events also go to ``trace.messages`` and ``tool_call``
events to ``trace.tool_calls`` (without their ``type`` key), and ``usage`` events
``{input_tokens, output_tokens, model?}`` are summed into ``trace.usage`` (the last ``model``
named wins). A line that is not such an object becomes a
``note`` event saying why — a harness's bad trace never fails the case.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import orjson
from pydantic import JsonValue

from benchbook.contracts.run import Trace

EVENT_TYPES = ("message", "tool_call", "tool_result", "usage", "note")
#: Bytes of the trace file read at most; the rest is reported in a note.
TRACE_FILE_LIMIT_BYTES = 32 * 1024 * 1024


def _note(text: str) -> dict[str, JsonValue]:
    return {"type": "note", "text": text}


def parse_event(line: str, number: int) -> dict[str, JsonValue]:
    """One line of the trace file as an event; a ``note`` event when it is not one."""
    try:
        value: Any = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        return _note(f"trace line {number} is not valid JSON: {exc}")
    if not isinstance(value, dict):
        return _note(f"trace line {number} is not a JSON object")
    if value.get("type") not in EVENT_TYPES:
        return _note(f"trace line {number} has unknown type {value.get('type')!r}")
    return value


def _add_usage(trace: Trace, event: dict[str, JsonValue], number: int) -> None:
    input_tokens = event.get("input_tokens", 0)
    output_tokens = event.get("output_tokens", 0)
    counts_ok = all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0
        for n in (input_tokens, output_tokens)
    )
    if not counts_ok:
        trace.events.append(_note(f"trace line {number}: usage token counts must be integers ≥ 0"))
        return
    assert isinstance(input_tokens, int) and isinstance(output_tokens, int)
    trace.usage.input_tokens += input_tokens
    trace.usage.output_tokens += output_tokens
    model = event.get("model")
    if isinstance(model, str) and model:
        trace.model = model


def apply_events(trace: Trace, path: Path) -> None:
    """Read ``path`` (if it exists) and add its events to ``trace`` (see the module docstring)."""
    try:  # never through a link the harness left (it would read a host file as the server)
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return
        data = handle.read(TRACE_FILE_LIMIT_BYTES + 1)
    if len(data) > TRACE_FILE_LIMIT_BYTES:
        data = data[:TRACE_FILE_LIMIT_BYTES]
        trace.events.append(_note(f"trace file over {TRACE_FILE_LIMIT_BYTES} bytes: truncated"))
    for number, raw in enumerate(data.decode("utf-8", "replace").splitlines(), start=1):
        if not raw.strip():
            continue
        event = parse_event(raw, number)
        trace.events.append(event)
        kind = event["type"]
        body = {key: value for key, value in event.items() if key != "type"}
        if kind == "message":
            trace.messages.append(body)
        elif kind == "tool_call":
            trace.tool_calls.append(body)
        elif kind == "usage":
            _add_usage(trace, event, number)
