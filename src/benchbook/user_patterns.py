"""Regular expressions that people supply, matched against answers and case data in bounded time.

A pattern from a grader config (``regex``'s ``pattern``, ``command``'s ``pass_pattern``) or a
mapping (``answer_pattern``) is written in Python ``re`` syntax and checked by ``re.compile``,
so the syntax accepted is exactly ``re``'s. It is then compiled and matched by the ``regex``
package in its ``re``-compatible mode (``VERSION0``), because ``re`` can neither stop a match
nor let go of the GIL: one catastrophic pattern (``^(?:.?){12}(?:.?){12}(?:.?){12}Z``) froze the
whole server. Here every match runs with ``concurrent=True`` (the GIL is released while it
runs) and a ``timeout`` (:data:`MATCH_TIMEOUT_S`); running out of time raises
:class:`PatternTimeout`, which callers turn into an error, never a pass.
"""

from __future__ import annotations

import re
from typing import Any, cast

import regex

MATCH_TIMEOUT_S = 2.0
"""The longest one match of a user pattern may take (one answer, one case row)."""

_FLAGS = {re.IGNORECASE: regex.IGNORECASE, re.MULTILINE: regex.MULTILINE, re.DOTALL: regex.DOTALL}


class PatternTimeout(Exception):
    """A user pattern took longer than its time bound on one text."""

    def __init__(self, timeout_s: float) -> None:
        super().__init__(f"pattern took longer than {timeout_s:g} s")
        self.timeout_s = timeout_s


class UserPattern:
    """A user-supplied pattern, checked as ``re`` syntax, matched with a time bound."""

    def __init__(self, source: str, flags: int = 0) -> None:
        """Raises ``re.error`` when ``source`` is not a Python regular expression; ``flags``
        is a combination of ``re.IGNORECASE``, ``re.MULTILINE`` and ``re.DOTALL``."""
        checked = re.compile(source, flags)
        bounded = regex.VERSION0
        for flag, twin in _FLAGS.items():
            if flags & flag:
                bounded |= twin
        self.pattern = source
        self.groups = checked.groups
        self._compiled: Any = regex.compile(source, bounded)

    def search(self, text: str, timeout_s: float = MATCH_TIMEOUT_S) -> UserMatch | None:
        """The first match anywhere in ``text``. Raises PatternTimeout past ``timeout_s``."""
        return self._run("search", text, timeout_s)

    def fullmatch(self, text: str, timeout_s: float = MATCH_TIMEOUT_S) -> UserMatch | None:
        """A match of all of ``text``. Raises PatternTimeout past ``timeout_s``."""
        return self._run("fullmatch", text, timeout_s)

    def _run(self, how: str, text: str, timeout_s: float) -> UserMatch | None:
        try:
            found = getattr(self._compiled, how)(text, timeout=timeout_s, concurrent=True)
        except TimeoutError as exc:
            raise PatternTimeout(timeout_s) from exc
        return None if found is None else UserMatch(found)


class UserMatch:
    """What a :class:`UserPattern` matched: ``group(n)`` as ``re.Match.group`` returns it."""

    def __init__(self, found: Any) -> None:
        self._found = found

    def group(self, index: int = 0) -> str | None:
        """The text of group ``index`` (None for a group that did not take part)."""
        return cast("str | None", self._found.group(index))
