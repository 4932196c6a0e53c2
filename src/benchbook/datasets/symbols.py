"""Definitions in source files via tree-sitter (LOCALIZATION §4, SPEC I).

The definition node types per language follow the ContextBench scorer (arXiv 2602.05892,
``EuniAI/ContextBench``) so that our symbols and its symbols agree:

| language | definition node types |
|---|---|
| python | ``function_definition``, ``class_definition`` (``async def`` is one too) |
| javascript | ``function_declaration``, ``class_declaration``, ``method_definition``,
  ``arrow_function`` |
| typescript, tsx | ``function_declaration``, ``class_declaration``, ``method_definition``,
  ``interface_declaration`` |
| java | ``method_declaration``, ``class_declaration``, ``interface_declaration``,
  ``constructor_declaration`` |
| go | ``function_declaration``, ``method_declaration``, ``type_declaration`` |
| rust | ``function_item``, ``impl_item``, ``struct_item``, ``trait_item`` |
| c (``.c``, ``.h``) | ``function_definition``, ``struct_specifier`` |
| cpp | ``function_definition``, ``class_specifier``, ``struct_specifier`` |

Grammars come from the ``tree-sitter-language-pack`` wheel (optional extra ``localization``;
versions before 1.0 ship the compiled grammars, later ones download them at run time).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from benchbook.errors import InvalidInput

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

LANGUAGE_BY_EXTENSION: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".java": "java",
    ".go": "go",
    ".rs": "rust",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
}
"""File extension (lower case) → tree-sitter language name."""

_TS_DEFS = {"function_declaration", "class_declaration", "method_definition"}
DEFINITION_NODES: dict[str, frozenset[str]] = {
    "python": frozenset({"function_definition", "class_definition", "async_function_definition"}),
    "javascript": frozenset({*_TS_DEFS, "arrow_function"}),
    "typescript": frozenset({*_TS_DEFS, "interface_declaration"}),
    "tsx": frozenset({*_TS_DEFS, "interface_declaration"}),
    "java": frozenset(
        {
            "method_declaration",
            "class_declaration",
            "interface_declaration",
            "constructor_declaration",
        }
    ),
    "go": frozenset({"function_declaration", "method_declaration", "type_declaration"}),
    "rust": frozenset({"function_item", "impl_item", "struct_item", "trait_item"}),
    "c": frozenset({"function_definition", "struct_specifier"}),
    "cpp": frozenset({"function_definition", "class_specifier", "struct_specifier"}),
}
"""Language → the tree-sitter node types that count as definitions."""

_IDENTIFIERS = ("identifier", "field_identifier", "type_identifier", "property_identifier")


@dataclass(frozen=True)
class Definition:
    """One definition node of a source file.

    Attributes:
        kind: the tree-sitter node type (``function_definition`` …).
        name: its own name (``""`` when it has none, e.g. an anonymous arrow function).
        qualified: names of the enclosing named definitions and its own, joined by ``.``
            (``Class.method``).
        start_byte, end_byte: byte offsets in the file, ``end_byte`` exclusive (tree-sitter's).
        start_line, end_line: 1-based inclusive lines of the whole node.
    """

    kind: str
    name: str
    qualified: str
    start_byte: int
    end_byte: int
    start_line: int
    end_line: int


def language_of(path: str) -> str | None:
    """The tree-sitter language of ``path`` by extension, None for non-code files."""
    return LANGUAGE_BY_EXTENSION.get(os.path.splitext(path.lower())[1])


@cache
def _parser(language: str) -> Parser:
    try:
        from tree_sitter_language_pack import get_parser
    except ImportError as exc:  # the optional extra is missing
        raise InvalidInput(
            "symbol extraction needs tree-sitter grammars: install benchbook[localization]",
            {"missing": "tree-sitter-language-pack"},
        ) from exc
    return get_parser(language)  # type: ignore[arg-type]


def _text(source: bytes, node: Node) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _first_identifier(source: bytes, node: Node | None, depth: int = 0) -> str:
    """The first identifier under ``node`` (declarators of C/C++ nest them), depth ≤ 6."""
    if node is None or depth > 6:
        return ""
    if node.type in _IDENTIFIERS or node.type in ("qualified_identifier", "destructor_name"):
        return _text(source, node)
    named = node.child_by_field_name("declarator") or node.child_by_field_name("name")
    if named is not None:
        return _first_identifier(source, named, depth + 1)
    for child in node.named_children:
        found = _first_identifier(source, child, depth + 1)
        if found:
            return found
    return ""


def definition_name(source: bytes, node: Node) -> str:
    """The name of a definition node (see the module table); ``""`` when it has none."""
    if node.type == "arrow_function":
        parent = node.parent
        if parent is not None and parent.type in ("variable_declarator", "pair"):
            key = parent.child_by_field_name("name") or parent.child_by_field_name("key")
            return _text(source, key) if key is not None else ""
        return ""
    if node.type == "impl_item":  # `impl<T> Trait for Help<'a, T>` → "Help"
        impl_type = node.child_by_field_name("type")
        while impl_type is not None and impl_type.type in (
            "generic_type",
            "scoped_type_identifier",
        ):
            impl_type = impl_type.child_by_field_name("type") or impl_type.child_by_field_name(
                "name"
            )
        return _text(source, impl_type) if impl_type is not None else ""
    if node.type == "type_declaration":
        spec = next((c for c in node.named_children if c.type in ("type_spec", "type_alias")), None)
        name = spec.child_by_field_name("name") if spec is not None else None
        return _text(source, name) if name is not None else ""
    if node.type in ("function_definition",) and node.child_by_field_name("declarator"):
        return _first_identifier(source, node.child_by_field_name("declarator"))
    name = node.child_by_field_name("name")
    return _text(source, name) if name is not None else ""


def definitions(path: str, source: bytes) -> list[Definition]:
    """Every definition in ``source`` (the file at ``path``), nested ones included, in
    document order (outer before inner).

    Returns ``[]`` for a file whose extension is not in :data:`LANGUAGE_BY_EXTENSION`.

    Raises:
        InvalidInput: the ``localization`` extra (tree-sitter grammars) is not installed.
    """
    language = language_of(path)
    if language is None:
        return []
    kinds = DEFINITION_NODES[language]
    tree = _parser(language).parse(source)
    found: list[Definition] = []
    stack: list[tuple[Node, tuple[str, ...]]] = [(tree.root_node, ())]
    while stack:
        node, scope = stack.pop()
        if node.type in kinds:
            name = definition_name(source, node)
            qualified = ".".join((*scope, name)) if name else ".".join(scope)
            found.append(
                Definition(
                    kind=node.type,
                    name=name,
                    qualified=qualified,
                    start_byte=node.start_byte,
                    end_byte=node.end_byte,
                    start_line=node.start_point[0] + 1,
                    end_line=node.end_point[0] + 1,
                )
            )
            if name:
                scope = (*scope, name)
        stack.extend((child, scope) for child in reversed(node.named_children))
    return found


def innermost(defs: list[Definition], line: int) -> Definition | None:
    """The innermost definition of ``defs`` whose lines contain ``line`` (1-based), or None."""
    best: Definition | None = None
    for d in defs:
        if d.start_line <= line <= d.end_line and (
            best is None or d.end_line - d.start_line <= best.end_line - best.start_line
        ):
            best = d
    return best
