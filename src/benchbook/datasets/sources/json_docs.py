"""Parsing JSON documents from files without losing a number (issue 8).

orjson is the fast path, but it reads an integer beyond 64 bits as a float (rounding
``123456789012345678901234567890``). Such an integer has at least 20 digits, so a document holding
a run of 20 digits is parsed again with the standard library, which keeps integers exact (floats
are correctly rounded by both, so they parse the same). ``NaN`` and ``Infinity`` are not JSON:
orjson refuses them, and :func:`non_finite_token` names the token for the error message.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

_LONG_DIGITS = re.compile(rb"\d{20}")
_NON_FINITE = re.compile(r"-?(?:NaN|Infinity)")


def _no_constants(token: str) -> Any:
    raise ValueError(f"{token} is not a JSON number")


def loads(data: bytes | bytearray) -> Any:
    """The JSON value of ``data`` with integers of any size exact.

    Raises:
        orjson.JSONDecodeError: not valid JSON (``NaN``/``Infinity`` included).
    """
    value = orjson.loads(data)
    if _LONG_DIGITS.search(data) is None:
        return value
    return json.loads(data, parse_constant=_no_constants)


def non_finite_token(exc: orjson.JSONDecodeError) -> tuple[str, int] | None:
    """``(token, column)`` when the error is a ``NaN``/``Infinity`` token (``column`` 1-based on
    the error's line, at the token's first character, its minus sign included), else None."""
    lines = exc.doc.splitlines() or [""]
    line = lines[min(exc.lineno, len(lines)) - 1]
    start = exc.colno - 1
    for begin in (start - 1, start):  # orjson points past a minus sign
        if begin < 0:
            continue
        match = _NON_FINITE.match(line, begin)
        if match is not None:
            return match.group(0), begin + 1
    return None
