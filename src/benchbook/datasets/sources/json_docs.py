"""Parsing JSON documents from files without losing a number (issue 8).

orjson is the fast path, but it reads an integer beyond 64 bits as a float (rounding
``123456789012345678901234567890``). A document in which orjson found a float of magnitude 2**63
or more is therefore parsed again with the standard library, which keeps integers exact (floats
are correctly rounded by both, so they parse the same). ``NaN`` and ``Infinity`` are not JSON:
orjson refuses them, and :func:`non_finite_token` names the token for the error message.

A key repeated inside one object is an error (:class:`DuplicateKey`, naming the key and its
line) instead of the last value silently winning. orjson keeps the last value, so the document's
keys are counted in its text (a string followed by ``:`` is always a key) and compared with the
parsed objects' keys; only a document whose counts differ is re-read key by key.
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
import re
from collections.abc import Callable
from typing import Any

import orjson

_NON_FINITE = re.compile(r"-?(?:NaN|Infinity)")


def _no_constants(token: str) -> Any:
    raise ValueError(f"{token} is not a JSON number")


_QUOTE_COLON = re.compile(rb'"\s*:')
# Every string literal, scanned left to right, with the colon that makes it a key (group 1).
# Outside strings valid JSON has no quote, so each match starts at a real opening quote and the
# scan is linear; a pattern that required the colon restarted inside every string value that
# failed it (quadratic: a 750 KB JSONL text in one JSON string took minutes).
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"(\s*:)?')


class DuplicateKey(ValueError):
    """A key repeated inside one JSON object; ``line`` is 1-based within the document."""

    def __init__(self, key: str, line: int) -> None:
        super().__init__(f"duplicate key {key!r} in one JSON object (line {line})")
        self.key = key
        self.line = line


def _scan(value: Any) -> tuple[int, bool]:
    """``(keys in every object, whether a float is ≥ 2**63 in magnitude)``: orjson reads an
    integer outside 64 bits as such a float, so only then is the document re-read exactly."""
    kind = type(value)
    if kind is float:
        return 0, abs(value) >= _I64_LIMIT
    if kind is dict:
        keys, items = len(value), value.values()
    elif kind is list:
        keys, items = 0, value
    else:
        return 0, False
    big = False
    for item in items:
        if type(item) in _NESTED:
            k, b = _scan(item)
            keys, big = keys + k, big or b
        elif type(item) is float and abs(item) >= _I64_LIMIT:
            big = True
    return keys, big


_NESTED = (dict, list, float)
_I64_LIMIT = 2.0**63


def loads(data: bytes | bytearray) -> Any:
    """The JSON value of ``data`` with integers of any size exact and no key repeated.

    Raises:
        orjson.JSONDecodeError: not valid JSON (``NaN``/``Infinity`` included).
        DuplicateKey: an object repeats a key.
    """
    value = orjson.loads(data)
    keys, big = _scan(value)
    # Every key is followed by ``"\s*:``, so a duplicate always makes the first count differ;
    # strings holding ``":`` (code, nested JSON) differ too and get the exact key count.
    if not big and (len(_QUOTE_COLON.findall(data)) == keys or _key_count(data) == keys):
        return value
    return _strict_loads(bytes(data).decode("utf-8"))


def _key_count(data: bytes | bytearray) -> int:
    """How many string literals of the (valid) JSON document ``data`` are object keys."""
    return sum(1 for colon in _STRING.findall(data) if colon)


# Documented-in-source parts of the standard library's parser that typeshed does not declare.
_JSON_OBJECT: Callable[..., tuple[list[tuple[str, Any]], int]] = vars(json.decoder)["JSONObject"]
_PY_SCANNER: Callable[[json.JSONDecoder], Any] = vars(json.scanner)["py_make_scanner"]


def _strict_loads(text: str) -> Any:
    """The standard library's parser (exact integers), checking each object for repeated keys."""
    decoder = json.JSONDecoder(parse_constant=_no_constants, object_pairs_hook=list)

    def parse_object(s_and_end: tuple[str, int], *args: Any) -> tuple[dict[str, Any], int]:
        s, start = s_and_end
        pairs, end = _JSON_OBJECT(s_and_end, *args)
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                found = list(re.finditer(re.escape(json.dumps(key)) + r"\s*:", s[start:end]))
                pos = start + (found[1].start() if len(found) > 1 else 0)
                raise DuplicateKey(key, s.count("\n", 0, pos) + 1)
            seen.add(key)
        return dict(pairs), end

    # The pure-Python scanner calls ``parse_object`` through the decoder (the C one does not).
    vars(decoder)["parse_object"] = parse_object
    vars(decoder)["scan_once"] = _PY_SCANNER(decoder)
    return decoder.decode(text)


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
