"""What an agent needs beyond a service docstring: advice, parameter notes and hints.

Each noun module (``mcp/datasets.py``, ``mcp/benchmarks.py`` …) maps operation names to a
:class:`ToolGuide`; ``mcp/tools.py`` merges them into the generated tool descriptions. A tool
without a guide still works (its docstring is its description).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ToolGuide:
    """Agent-oriented additions to one generated tool.

    Attributes:
        advice: paragraphs appended to the docstring (how and when to use the tool).
        parameters: parameter name → description in the input schema.
        read_only: the tool writes nothing (MCP ``readOnlyHint``).
        destructive: the tool deletes or overwrites (MCP ``destructiveHint``).
        idempotent: repeating the same call has no further effect (MCP ``idempotentHint``).
        open_world: the tool reaches outside services such as Hugging Face (``openWorldHint``).
    """

    advice: str = ""
    parameters: dict[str, str] = field(default_factory=dict)
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    open_world: bool = False
