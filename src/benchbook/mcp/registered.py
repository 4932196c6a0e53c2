"""Guides of the versioned registered nouns' tools (issue 32): ``list_<nouns>``,
``get_<noun>`` and ``delete_<noun>_version`` read alike for harnesses, recipes, graders and
environment recipes; :func:`noun_guides` writes them once.
"""

from __future__ import annotations

from benchbook.mcp.guide import ToolGuide
from benchbook.transports.nouns import NounOperations

SEARCH = "Case-insensitive substring of the id or description."


def id_text(title: str = "") -> str:
    """An id parameter's description: ``The harness id: 1-128 of …`` (``The id: …``)."""
    named = f"{title} id" if title else "id"
    return f"The {named}: 1-128 of [A-Za-z0-9._-], starting with a letter or digit."


def noun_guides(
    ops: NounOperations, register: ToolGuide, id_description: str, delete: str = ""
) -> dict[str, ToolGuide]:
    """``register_<name>`` (given), ``list_<plural>``, ``get_<name>`` and, when the noun has
    one, ``delete_<name>_version`` with ``delete`` as its advice."""
    name, plural, id_param = ops.name, ops.plural, f"{ops.name}_id"
    guides = {
        f"register_{name}": register,
        f"list_{plural}": ToolGuide(parameters={"search": SEARCH}, read_only=True),
        f"get_{name}": ToolGuide(
            parameters={id_param: id_description, "version": "An exact SemVer or 'latest'."},
            read_only=True,
        ),
    }
    if ops.deletable:
        guides[f"delete_{name}_version"] = ToolGuide(
            advice=delete,
            parameters={id_param: id_description, "version": "An exact SemVer version."},
            destructive=True,
        )
    return guides
