"""Row templates (SPEC E.3): ``{field}``, dotted paths, optional fields, literal braces.

Syntax:

- ``{field}`` inserts the row's value of ``field``; ``{a.b}`` / ``{a.0}`` walk into nested objects
  and lists (a key that itself contains a dot, such as ``"v1.2"``, is matched whole first).
- ``{field?}`` inserts an empty string when the field (or any step of its path) is missing.
- ``{{`` and ``}}`` are literal braces.
- Values are inserted once and never re-expanded: a value containing ``{x}`` stays as it is.

Values render as text: strings as they are, ``None`` as an empty string, booleans as
``true``/``false``, numbers with ``str``, objects and lists as compact JSON.

A template is compiled once (:func:`compile_template`) and rendered per row, so a 1M-row import
parses each template a single time.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from benchbook.datasets.identity import exact_ints
from benchbook.errors import InvalidInput

_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")
_MISSING = object()


@dataclass(frozen=True)
class _Field:
    name: str
    path: tuple[str, ...]
    optional: bool


class MissingField(Exception):
    """Raised by :meth:`Template.render` when a required field is absent; carries its name."""

    def __init__(self, field: str) -> None:
        super().__init__(field)
        self.field = field


def value_text(value: Any) -> str:
    """The text form of a JSON value as inserted by templates (see module docstring)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    try:
        return orjson.dumps(value, default=str).decode()
    except orjson.JSONEncodeError:  # an integer beyond 64 bits: written with its exact digits
        return orjson.dumps(exact_ints(value), default=str).decode()


def lookup(row: Mapping[str, Any], name: str) -> Any:
    """The value at ``name`` (a key or a dotted path) in ``row``; ``_MISSING`` when absent."""
    if name in row:
        return row[name]
    if "." not in name:
        return _MISSING
    current: Any = row
    for step in name.split("."):
        if isinstance(current, Mapping):
            if step not in current:
                return _MISSING
            current = current[step]
        elif isinstance(current, list) and step.isdigit() and int(step) < len(current):
            current = current[int(step)]
        else:
            return _MISSING
    return current


def is_missing(value: Any) -> bool:
    """True when :func:`lookup` found nothing."""
    return value is _MISSING


class Template:
    """A compiled template. ``fields`` lists the referenced field names in order."""

    def __init__(self, source: str, parts: list[str | _Field]) -> None:
        self.source = source
        self._parts = parts
        self.fields = [p.name for p in parts if isinstance(p, _Field)]
        self._single = parts[0] if len(parts) == 1 and isinstance(parts[0], _Field) else None

    def render(self, row: Mapping[str, Any]) -> str:
        """Expand the template for one row.

        Raises:
            MissingField: a required (non-``?``) field is absent; the caller names the row.
        """
        if self._single is not None:
            return self._text(row, self._single)
        out = []
        for part in self._parts:
            out.append(part if isinstance(part, str) else self._text(row, part))
        return "".join(out)

    @staticmethod
    def _text(row: Mapping[str, Any], field: _Field) -> str:
        value = lookup(row, field.name)
        if value is _MISSING:
            if field.optional:
                return ""
            raise MissingField(field.name)
        return value_text(value)


def compile_template(source: str, where: str = "template") -> Template:
    """Parse ``source`` once into a :class:`Template`.

    Args:
        source: the template text.
        where: the place named in errors (for example ``mapping.task_template``).

    Raises:
        InvalidInput: an unmatched brace or an empty ``{}`` placeholder, naming ``where`` and the
            character offset.
    """
    parts: list[str | _Field] = []
    pos = 0
    literal: list[str] = []
    for match in _TOKEN.finditer(source):
        literal.append(source[pos : match.start()])
        pos = match.end()
        token = match.group(0)
        if token in ("{{", "}}"):
            literal.append(token[0])
            continue
        name = match.group(1)
        if name is None or not name.strip().rstrip("?").strip():
            problem = "unmatched brace" if name is None else "empty placeholder {}"
            message = f"{where}: {problem} at character {match.start()} (write {{{{ or }}}})"
            raise InvalidInput(message, {"errors": [{"path": where, "message": message}]})
        if literal:
            parts.append("".join(literal))
            literal = []
        optional = name.endswith("?")
        clean = name[:-1] if optional else name
        parts.append(_Field(clean.strip(), tuple(clean.strip().split(".")), optional))
    literal.append(source[pos:])
    if "".join(literal) or not parts:
        parts.append("".join(literal))
    return Template(source, parts)
