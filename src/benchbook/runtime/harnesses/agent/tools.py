"""The agent's tools: their JSON schemas (chat-completions ``tools``) and one call's execution.

Every tool but ``submit`` runs in the case's sandbox (:mod:`.process`, :mod:`.files`):

- ``bash {command}`` — ``bash -c`` in the workdir; ``python {code}`` — ``python3 -`` with the code
  on stdin. Both are killed at ``tool_timeout_s`` (or when the loop's time runs out); the model
  sees the exit code and the output cut to ``tool_output_bytes`` (head and tail kept).
- ``read_file {path, start_line?, end_line?}``, ``write_file {path, content}``,
  ``edit_file {path, old_str, new_str}`` (the one occurrence of ``old_str`` replaced),
  ``list_dir {path?}`` — confined to the workdir (:mod:`.files`).
- ``browser {action, …}`` — the case's Chromium over CDP (browser environments only).
- ``submit {answer}`` — ends the case with ``answer``; handled by the loop.

A call's result is a :class:`~benchbook.runtime.harnesses.agent.outcome.ToolOutcome` (re-exported
here; the ``browser`` tool, :mod:`.browser`, builds it too).

The model's arguments are hostile input: each is checked against its schema here, and a bad
call becomes an error message to the model, never an exception.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import JsonValue

from benchbook.contracts.harness import AgentConfig, AgentTool
from benchbook.runtime.environments import Workspace
from benchbook.runtime.harnesses.agent.browser import run_browser
from benchbook.runtime.harnesses.agent.files import run_file_tool
from benchbook.runtime.harnesses.agent.outcome import ToolOutcome
from benchbook.runtime.harnesses.agent.process import run_tool_process
from benchbook.runtime.sandbox import SandboxError, SandboxLimits

_STR = {"type": "string"}
_INT = {"type": "integer", "minimum": 1}
# name → (description, properties, required)
_SPECS: dict[str, tuple[str, dict[str, Any], list[str]]] = {
    "bash": (
        "Run a bash command in the workspace (your working directory). Returns the exit code "
        "and the combined stdout and stderr; long output is cut in the middle.",
        {"command": _STR},
        ["command"],
    ),
    "python": (
        "Run a Python 3 program in the workspace. Print what you want to see.",
        {"code": _STR},
        ["code"],
    ),
    "read_file": (
        "Read a text file of the workspace, with line numbers; optionally only lines "
        "start_line..end_line (1-based, inclusive).",
        {"path": _STR, "start_line": _INT, "end_line": _INT},
        ["path"],
    ),
    "write_file": (
        "Create or overwrite a file of the workspace with content.",
        {"path": _STR, "content": _STR},
        ["path", "content"],
    ),
    "edit_file": (
        "Replace the one occurrence of old_str in a file of the workspace with new_str.",
        {"path": _STR, "old_str": _STR, "new_str": _STR},
        ["path", "old_str", "new_str"],
    ),
    "list_dir": (
        "List a directory of the workspace (default: the workspace itself).",
        {"path": _STR},
        [],
    ),
    "browser": (
        "Drive the open browser: action 'goto' (url), 'click' (selector), 'type' (selector, "
        "text), 'text' (the page's visible text), 'title' or 'url'.",
        {
            "action": {"type": "string", "enum": ["goto", "click", "type", "text", "title", "url"]},
            "url": _STR,
            "selector": _STR,
            "text": _STR,
        },
        ["action"],
    ),
    "submit": (
        "Submit your final answer. This ends the task; call it exactly once, when done.",
        {"answer": _STR},
        ["answer"],
    ),
}
_FILE_TOOLS = frozenset({"read_file", "write_file", "edit_file", "list_dir"})


def offered_tools(config: AgentConfig, env_kind: str) -> list[AgentTool]:
    """The configured tools this case can use (``browser`` only in a browser environment)."""
    return [t for t in config.tools if t != "browser" or env_kind == "browser"]


def tool_schemas(names: Sequence[str]) -> list[dict[str, JsonValue]]:
    """The chat-completions ``tools`` array for ``names`` (``{type: function, function: …}``)."""
    out: list[dict[str, JsonValue]] = []
    for name in names:
        description, properties, required = _SPECS[name]
        parameters: dict[str, JsonValue] = {
            "type": "object",
            "properties": properties,
            "required": list(required),
            "additionalProperties": False,
        }
        function: dict[str, JsonValue] = {
            "name": name,
            "description": description,
            "parameters": parameters,
        }
        out.append({"type": "function", "function": function})
    return out


def check_arguments(name: str, arguments: object) -> str | None:
    """Why ``arguments`` do not fit the schema of tool ``name``; None when they do."""
    if not isinstance(arguments, dict):
        return "the arguments must be a JSON object"
    _, properties, required = _SPECS[name]
    missing = [key for key in required if key not in arguments]
    if missing:
        return f"missing argument(s): {', '.join(missing)}"
    unknown = sorted(set(arguments) - set(properties))
    if unknown:
        return f"unknown argument(s): {', '.join(unknown)}"
    for key, value in arguments.items():
        kind = properties[key]["type"]
        if kind == "string" and not isinstance(value, str):
            return f"{key} must be a string"
        if kind == "integer" and (
            not isinstance(value, int) or isinstance(value, bool) or value < 1
        ):
            return f"{key} must be an integer ≥ 1"
        if "\0" in str(value):
            return f"{key} must not contain NUL"
    return None


async def run_tool(
    name: str,
    arguments: dict[str, Any],
    workspace: Workspace,
    config: AgentConfig,
    timeout_s: float,
    limits: SandboxLimits | None = None,
) -> ToolOutcome:
    """Execute one checked call of ``name`` (not ``submit``) with at most ``timeout_s`` seconds
    (``limits``: the case's sandbox resource limits).

    Never raises for the tool's failure: a sandbox that cannot start, a timeout or a refused path
    is an outcome with ``ok`` False saying so.
    """
    try:
        if name in ("bash", "python"):
            return await _run_program(name, arguments, workspace, config, timeout_s, limits)
        if name in _FILE_TOOLS:
            ok, text, run = await run_file_tool(
                name,
                arguments,
                workspace,
                file_bytes=config.file_bytes,
                output_bytes=config.tool_output_bytes,
                timeout_s=timeout_s,
                limits=limits,
            )
            content = text if ok else f"error: {text}"
            return ToolOutcome(ok, content, timed_out=run.timed_out, duration_ms=run.duration_ms)
        if name == "browser":
            return await run_browser(arguments, workspace, config, timeout_s)
    except SandboxError as exc:
        return ToolOutcome(False, f"error: the sandbox refused the call: {exc.message}")
    except OSError as exc:
        return ToolOutcome(False, f"error: cannot start the tool: {exc.strerror or exc}")
    return ToolOutcome(False, f"error: unknown tool {name}")


async def _run_program(
    name: str,
    arguments: dict[str, Any],
    workspace: Workspace,
    config: AgentConfig,
    timeout_s: float,
    limits: SandboxLimits | None,
) -> ToolOutcome:
    if name == "bash":
        argv, stdin = ["bash", "-c", arguments["command"]], b""
    else:
        argv, stdin = ["python3", "-"], arguments["code"].encode("utf-8", "replace")
    run = await run_tool_process(
        argv,
        workspace,
        stdin=stdin,
        timeout_s=timeout_s,
        limit_bytes=config.tool_output_bytes,
        limits=limits,
        network=config.network,
    )
    if run.timed_out:
        head = f"timed out after {timeout_s:g} s: the process was killed"
    else:
        head = f"exit code {run.exit_code}"
    return ToolOutcome(
        ok=run.exit_code == 0,
        content=f"{head}\n{run.output}" if run.output else head,
        exit_code=run.exit_code,
        timed_out=run.timed_out,
        output_bytes=run.output_bytes,
        cut_bytes=run.cut_bytes,
        duration_ms=run.duration_ms,
    )


__all__ = ["ToolOutcome", "check_arguments", "offered_tools", "run_tool", "tool_schemas"]
