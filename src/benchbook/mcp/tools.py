"""MCP tools generated from ``services.registry.OPERATIONS`` (SPEC D: one tool per operation).

Each tool is named exactly after its service function. Its input schema comes from the
function's signature — every parameter except the ones only the server can supply
(:data:`SERVER_SIDE`), pydantic models as nested schemas — and its description from the
docstring plus the noun module's :class:`~benchbook.mcp.guide.ToolGuide`. Results are JSON
(``structuredContent``, mirrored as text); a non-object result is wrapped as ``{"result": …}``.
Streaming operations (a return type of ``Iterator[bytes]``, e.g. ``export_dataset``) return
their JSONL text, bounded by :data:`MAX_STREAM_BYTES`.
"""

from __future__ import annotations

import collections.abc
import inspect
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import mcp.types as types
import orjson
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, create_model

from benchbook.datasets.identity import exact_ints
from benchbook.mcp import (
    accounts,
    benchmarks,
    comments,
    datasets,
    graders,
    harnesses,
    jobs,
    localization,
    recipes,
    runs,
    secrets,
)
from benchbook.mcp.guide import ToolGuide
from benchbook.services.bounds import check_text
from benchbook.services.context import Context
from benchbook.services.registry import OPERATIONS
from benchbook.services.validation import parse_model

#: Parameters a caller never supplies over MCP: the principal's context (from the transport),
#: a server-local file path with its name and ownership flag (an agent must not make the server
#: read its disk; file content travels inline as ``text``), and a progress callback.
SERVER_SIDE = frozenset({"ctx", "file", "file_name", "own_file", "progress"})
#: Largest JSONL text a streaming tool returns (bytes); longer output is cut at a line boundary.
MAX_STREAM_BYTES = 8 * 1024 * 1024
GUIDES: dict[str, ToolGuide] = {
    **datasets.GUIDES,
    **benchmarks.GUIDES,
    **recipes.GUIDES,
    **jobs.GUIDES,
    **comments.GUIDES,
    **secrets.GUIDES,
    **accounts.GUIDES,
    **harnesses.GUIDES,
    **graders.GUIDES,
    **runs.GUIDES,
    **localization.GUIDES,
}

STREAM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "jsonl": {"type": "string", "description": "One JSON document per line."},
        "lines": {"type": "integer", "description": "Lines included."},
        "truncated": {"type": "boolean", "description": "True when output stopped early."},
        "limit_bytes": {"type": "integer", "description": "The size bound of this transport."},
    },
    "required": ["jsonl", "lines", "truncated", "limit_bytes"],
}


@dataclass(frozen=True)
class OperationTool:
    """One service operation exposed as an MCP tool.

    Attributes:
        function: the service function, called as ``function(ctx, **arguments)``.
        arguments: pydantic model of the caller-supplied parameters (extra keys refused).
        result: serializer of the return value; None for a byte stream.
        wrapped: the result is not a JSON object and travels as ``{"result": …}``.
        tool: the MCP ``Tool`` listed to clients.
    """

    function: Callable[..., Any]
    arguments: type[BaseModel]
    result: TypeAdapter[Any] | None
    wrapped: bool
    tool: types.Tool

    @property
    def name(self) -> str:
        """The tool's (and the service function's) name."""
        return self.tool.name

    def call(self, ctx: Context, arguments: dict[str, Any]) -> types.CallToolResult:
        """Validate ``arguments`` and run the operation as ``ctx``'s principal (blocking).

        Raises InvalidInput listing ``{path, message}`` for bad arguments (NUL or lone
        surrogates in any string included), and whatever
        ``BenchbookError`` the service raises.
        """
        check_text(arguments)
        parsed = parse_model(self.arguments, arguments, f"arguments of {self.name}")
        kwargs = {name: getattr(parsed, name) for name in type(parsed).model_fields}
        value = self.function(ctx, **kwargs)
        if self.result is None:
            return stream_result(value)
        structured = self.result.dump_python(value, mode="json", by_alias=True)
        if self.wrapped:
            structured = {"result": structured}
        try:
            text = orjson.dumps(structured).decode()
        except orjson.JSONEncodeError:  # an integer beyond 64 bits: written with its digits
            text = orjson.dumps(exact_ints(structured)).decode()
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], structured_content=structured
        )


def stream_result(chunks: Iterator[bytes], limit: int = MAX_STREAM_BYTES) -> types.CallToolResult:
    """JSONL text of ``chunks`` (each a ``\\n``-terminated line), at most ``limit`` bytes."""
    out, size, lines, truncated = [], 0, 0, False
    for chunk in chunks:
        if size + len(chunk) > limit:
            truncated = True
            break
        out.append(chunk)
        size += len(chunk)
        lines += chunk.count(b"\n")
    close = getattr(chunks, "close", None)
    if close is not None:  # release the database cursor behind a generator cut short
        close()
    jsonl = b"".join(out).decode()
    content = [types.TextContent(type="text", text=jsonl)]
    if truncated:
        note = f"truncated after {lines} lines: output is bounded to {limit} bytes over MCP"
        content.append(types.TextContent(type="text", text=note))
    structured = {"jsonl": jsonl, "lines": lines, "truncated": truncated, "limit_bytes": limit}
    return types.CallToolResult(content=content, structured_content=structured)


def _is_stream(hint: Any) -> bool:
    origin = typing.get_origin(hint)
    iterables = (collections.abc.Iterator, collections.abc.Iterable, collections.abc.Generator)
    return origin in iterables and typing.get_args(hint)[:1] == (bytes,)


def _server_only_type(hint: Any) -> bool:
    """A path or callable anywhere in ``hint`` (``Path | None`` …)."""
    if hint is Path or typing.get_origin(hint) is collections.abc.Callable:
        return True
    return any(_server_only_type(arg) for arg in typing.get_args(hint))


def docstring_args(doc: str) -> dict[str, str]:
    """``name → text`` of a Google-style ``Args:`` section (continuation lines joined)."""
    args: dict[str, str] = {}
    lines = doc.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == "Args:"), None)
    if start is None:
        return args
    indent, current = None, None
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        depth = len(line) - len(line.lstrip())
        indent = depth if indent is None else indent
        if depth < indent:
            break
        name, sep, text = line.strip().partition(":")
        if depth == indent and sep and name.isidentifier():
            current, args[name] = name, text.strip()
        elif current is not None:
            args[current] = f"{args[current]} {line.strip()}"
    return args


def _arguments_model(name: str, fn: Callable[..., Any], guide: ToolGuide) -> type[BaseModel]:
    hints = typing.get_type_hints(fn)
    documented = docstring_args(inspect.getdoc(fn) or "")
    fields: dict[str, Any] = {}
    for param in inspect.signature(fn).parameters.values():
        if param.name in SERVER_SIDE:
            continue
        if _server_only_type(hints[param.name]):
            raise TypeError(f"{name}.{param.name}: a path or callable cannot come from MCP")
        default = ... if param.default is inspect.Parameter.empty else param.default
        text = guide.parameters.get(param.name) or documented.get(param.name)
        described = Field(default, description=text)
        fields[param.name] = (hints[param.name], described)
    # allow_inf_nan=False here too: JSON values nested in a contract (``expected``, metadata)
    # take the outer model's setting, and a NaN from the JSON-RPC body would be stored as null.
    model: type[BaseModel] = create_model(
        f"{name}_arguments", __config__=ConfigDict(extra="forbid", allow_inf_nan=False), **fields
    )
    return model


def _output_schema(adapter: TypeAdapter[Any]) -> tuple[dict[str, Any], bool]:
    """The result's JSON schema and whether it had to be wrapped as ``{"result": …}``."""
    schema = adapter.json_schema(mode="serialization")
    if schema.get("type") == "object":
        return schema, False
    defs = schema.pop("$defs", None)
    wrapped: dict[str, Any] = {
        "type": "object",
        "properties": {"result": schema},
        "required": ["result"],
    }
    if defs:
        wrapped["$defs"] = defs
    return wrapped, True


def _description(fn: Callable[..., Any], guide: ToolGuide) -> str:
    doc = inspect.getdoc(fn) or fn.__name__
    return f"{doc}\n\n{guide.advice}".strip()


def operation_tool(name: str, fn: Callable[..., Any]) -> OperationTool:
    """Build the tool for operation ``name``. Raises TypeError (at startup) when a parameter's
    type has no JSON schema — a new operation must take JSON-shaped arguments."""
    guide = GUIDES.get(name, ToolGuide())
    arguments = _arguments_model(name, fn, guide)
    input_schema = arguments.model_json_schema()
    input_schema.pop("title", None)
    returns = typing.get_type_hints(fn).get("return", Any)
    if _is_stream(returns):
        result, output, wrapped = None, STREAM_SCHEMA, False
    else:
        result = TypeAdapter(returns)
        output, wrapped = _output_schema(result)
    annotations = types.ToolAnnotations(
        read_only_hint=guide.read_only,
        destructive_hint=guide.destructive,
        idempotent_hint=guide.idempotent,
        open_world_hint=guide.open_world,
    )
    tool = types.Tool(
        name=name,
        description=_description(fn, guide),
        input_schema=input_schema,
        output_schema=output,
        annotations=annotations,
    )
    return OperationTool(fn, arguments, result, wrapped, tool)


def operation_tools() -> dict[str, OperationTool]:
    """Every operation of ``OPERATIONS`` as a tool, in registry order (a new dict each call).

    The tools are built once per process (:func:`_built_tools`): ``OPERATIONS`` is fixed at
    import, and building its ~70 JSON schemas with pydantic took ~0.6-0.9 s, paid by every
    ``create_app`` (each ``benchbook serve`` start, each test app) and each MCP stdio start."""
    return dict(_built_tools())


@cache
def _built_tools() -> dict[str, OperationTool]:
    return {name: operation_tool(name, fn) for name, fn in OPERATIONS.items()}
