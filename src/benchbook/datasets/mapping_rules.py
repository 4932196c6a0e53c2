"""The per-value rules of a mapping (SPEC E.3), apart from the row → case builder.

:func:`resolve_env` infers the env kind of ``env: auto``; :func:`parse_flag` reads a
``flag_fields`` value as a boolean; :func:`git_url` reads ``owner/name`` as a GitHub clone URL;
a row that cannot become a case raises :class:`RowError` (:func:`missing_field` words the common
one). :mod:`benchbook.datasets.mapping` builds cases with them and re-exports them; the catalog
and the recognizers use them without the builder.
"""

from __future__ import annotations

import re
from typing import Any

from benchbook.contracts.recipe import Mapping
from benchbook.datasets.sources.base import Row
from benchbook.errors import InvalidInput
from benchbook.user_patterns import UserPattern

_OWNER_REPO = re.compile(r"^[\w.-]+/[\w.-]+$")
_TRUE = {"true", "yes", "y", "t"}
_FALSE = {"false", "no", "n", "f"}


class RowError(Exception):
    """A row that cannot become a case; the caller adds the row number."""


def missing_field(field: str | None, row: Row) -> RowError:
    """``field 'x' is missing; the row has 'a', 'b', …`` (the first 10 columns), with ``did you
    mean 'y'?`` when a column's name is close (difflib ratio ≥ 0.75); when the row has one
    column whose name holds ``;``, a tab or ``|``, a hint that the file uses that delimiter.
    Error path only."""
    columns = list(row)
    shown = ", ".join(repr(c) for c in columns[:10])
    more = f" and {len(columns) - 10} more" if len(columns) > 10 else ""
    found = f"the row has {shown}{more}" if columns else "the row has no fields"
    message = f"field {field!r} is missing; {found}"
    if field and columns:  # a typo in the mapping (``answr``) names the column it meant
        from difflib import get_close_matches

        close = get_close_matches(field, [str(c) for c in columns], n=1, cutoff=0.75)
        if close:
            message += f"; did you mean {close[0]!r}?"
    if len(columns) == 1:
        sep = next((s for s in (";", "\t", "|") if s in str(columns[0])), None)
        if sep is not None:
            message += (
                f" (one column whose name holds {sep!r}: is the file {sep!r}-separated? CSV files"
                " are read comma-separated, .tsv files tab-separated)"
            )
    return RowError(message)


def resolve_env(mapping: Mapping) -> str:
    """The env kind a mapping produces (SPEC E.3 inference when ``env`` is ``auto``)."""
    if mapping.env != "auto":
        return mapping.env
    if mapping.git_field or mapping.repo_path or mapping.files_template:
        return "repo"
    if mapping.start_url_field or mapping.start_url:
        return "browser"
    if mapping.answer_field:
        return "prompt"
    return "browser"


def parse_flag(value: Any) -> bool | None:
    """A flag value as a boolean: numbers by value (``"0.0"`` → False), yes/no words, ``""`` → None.

    Raises:
        ValueError: the value is not a recognisable flag.
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value != 0
    text = str(value).strip().lower()
    if not text:
        return None
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    return float(text) != 0


def git_url(value: str) -> str:
    """An http(s) clone URL; ``owner/name`` is read as a GitHub repository."""
    if _OWNER_REPO.match(value):
        return f"https://github.com/{value}.git"
    return value


def answer_pattern(source: str | None) -> UserPattern | None:
    """A mapping's ``answer_pattern`` compiled (matched with a time bound: a pattern is data
    a member may write), or None.

    Raises:
        InvalidInput: not a regular expression (``mapping.answer_pattern`` named).
    """
    if source is None:
        return None
    try:
        return UserPattern(source)
    except re.error as exc:
        message = f"mapping.answer_pattern: not a regular expression: {exc}"
        raise InvalidInput(
            message, {"errors": [{"path": "mapping.answer_pattern", "message": message}]}
        ) from exc
