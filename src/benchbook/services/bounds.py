"""Bounds on caller-supplied values every transport passes through: integers that reach a
64-bit database column (cursors, offsets, ids) and text that a database column can store.

PostgreSQL ``bigint`` holds ``-2**63 … 2**63-1`` and refuses NUL in text; neither backend can
encode a lone UTF-16 surrogate (``"\\ud800"`` is valid JSON). Checking here, in the services,
turns each into InvalidInput naming the parameter, so HTTP, MCP and the web answer alike.
"""

from __future__ import annotations

from typing import Any

from benchbook.errors import InvalidInput

INT64_MAX = 2**63 - 1
"""Largest value a ``bigint`` column (and an SQLite integer) holds."""

MAX_SEARCH = 512
"""Longest search or filter text a listing accepts (a case id's own limit). SQLite refuses a
``LIKE`` pattern past 50,000 bytes ("LIKE or GLOB pattern too complex"), which was a 500."""


def bounded_int(value: int, path: str, low: int = 0, high: int = INT64_MAX) -> int:
    """``value`` when ``low ≤ value ≤ high``.

    Raises:
        InvalidInput: naming ``path`` and the range, e.g. ``after must be 0…9223372036854775807``.
    """
    if not low <= value <= high:
        raise InvalidInput(
            f"{path} must be an integer from {low} to {high}, not {value}; pass the value the "
            "previous page returned",
            {"errors": [{"path": path, "message": f"out of range {low}…{high}"}]},
        )
    return value


def text_problem(value: Any, path: str = "") -> tuple[str, str] | None:
    """The first ``(path, message)`` of a string holding NUL or a lone surrogate anywhere in a
    JSON-shaped ``value`` (dict keys included), or None. Paths are dotted (``cases.3.task``)."""
    if isinstance(value, str):
        if "\x00" in value:
            return path or "(value)", "may not contain NUL characters (U+0000)"
        if any("\ud800" <= ch <= "\udfff" for ch in value):
            return path or "(value)", "may not contain a lone surrogate (invalid Unicode)"
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            sub = f"{path}.{key}" if path else str(key)
            found = text_problem(key, sub) or text_problem(item, sub)
            if found:
                return found
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            found = text_problem(item, f"{path}.{i}" if path else str(i))
            if found:
                return found
    return None


def check_text(value: Any, path: str = "") -> None:
    """Raise InvalidInput naming the field when :func:`text_problem` finds one."""
    found = text_problem(value, path)
    if found:
        where, message = found
        raise InvalidInput(
            f"{where}: {message}; remove it and send the text again",
            {"errors": [{"path": where, "message": message}]},
        )


def bounded_search(value: str | None, path: str) -> str | None:
    """``value`` when it is at most :data:`MAX_SEARCH` characters of storable text (or None).

    Raises:
        InvalidInput: naming ``path``: ``search: at most 512 characters``.
    """
    check_text(value, path)
    if value is not None and len(value) > MAX_SEARCH:
        raise InvalidInput(
            f"{path}: at most {MAX_SEARCH} characters",
            {"errors": [{"path": path, "message": f"longer than {MAX_SEARCH} characters"}]},
        )
    return value
