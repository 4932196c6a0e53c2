"""Tool generation (``mcp/tools.py``): schemas from signatures, docstrings, bounded streams."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchbook.contracts import Dataset
from benchbook.mcp.tools import docstring_args, operation_tool, operation_tools, stream_result
from benchbook.services.context import Context
from benchbook.services.registry import OPERATIONS


def test_every_parameter_of_every_tool_is_described_for_an_agent() -> None:
    undocumented = {
        name: [
            p for p, s in tool.tool.input_schema["properties"].items() if not s.get("description")
        ]
        for name, tool in operation_tools().items()
    }
    assert {n: ps for n, ps in undocumented.items() if ps} == {}
    assert list(operation_tools()) == list(OPERATIONS)


def test_the_tools_are_built_once_a_process_and_each_caller_gets_its_own_table() -> None:
    """Building ~70 JSON schemas cost every ``create_app`` ~0.6-0.9 s; they are built once."""
    first, second = operation_tools(), operation_tools()
    assert first is not second
    assert all(first[name] is second[name] for name in OPERATIONS)
    first.pop("list_datasets")
    assert "list_datasets" in operation_tools()
    rebuilt = operation_tool("list_datasets", OPERATIONS["list_datasets"])
    assert rebuilt.tool == second["list_datasets"].tool


def test_a_stream_is_cut_at_a_line_boundary_and_says_it_was_truncated() -> None:
    closed = []

    def lines() -> Iterator[bytes]:
        try:
            for i in range(100):
                yield f'{{"id":"c{i}"}}\n'.encode()
        finally:
            closed.append(True)

    result = stream_result(lines(), limit=50)
    data = result.structured_content
    assert data["jsonl"] == '{"id":"c0"}\n{"id":"c1"}\n{"id":"c2"}\n{"id":"c3"}\n'
    assert (data["lines"], data["truncated"], data["limit_bytes"]) == (4, True, 50)
    assert "truncated after 4 lines" in result.content[1].text  # type: ignore[union-attr]
    assert closed == [True]
    whole = stream_result(iter([b"a\n", b"b\n"]), limit=4).structured_content
    assert (whole["jsonl"], whole["truncated"]) == ("a\nb\n", False)


def register_from_disk(ctx: Context, path: Path, dataset: Dataset | None = None) -> None:
    """A would-be operation whose caller names a server-side path."""


def register_upload(ctx: Context, dataset: Dataset, file: Path | None = None) -> None:
    """An operation whose ``file`` the transport supplies."""


def test_an_operation_taking_a_path_from_the_caller_cannot_become_a_tool() -> None:
    with pytest.raises(TypeError, match=r"register_from_disk\.path"):
        operation_tool("register_from_disk", register_from_disk)
    tool = operation_tool("register_upload", register_upload).tool
    assert list(tool.input_schema["properties"]) == ["dataset"]
    assert tool.output_schema == {
        "type": "object",
        "properties": {"result": {"type": "null"}},
        "required": ["result"],
    }


def test_google_style_args_become_parameter_descriptions() -> None:
    doc = """Do it.

    Args:
        request: what to import,
            spread over two lines.
        file: a local file.

    Returns:
        nothing: really.
    """

    assert docstring_args(inspect.cleandoc(doc)) == {
        "request": "what to import, spread over two lines.",
        "file": "a local file.",
    }
