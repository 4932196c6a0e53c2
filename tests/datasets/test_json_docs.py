"""json_docs.loads: exact integers, repeated keys refused, and linear time on hostile strings."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

import orjson
import pytest

from benchbook.datasets.sources import json_docs


@contextmanager
def _deadline(seconds: int) -> Iterator[None]:
    """Raise TimeoutError in the main thread after ``seconds`` (a guard, not a speed test)."""

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"still parsing after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _jsonl_in_a_string(rows: int) -> bytes:
    """An import body whose ``text`` is a JSONL file: thousands of ``\\"key\\":`` inside one
    string value (the GSM8K import over HTTP; red before: minutes in the key count)."""
    lines = "\n".join(
        orjson.dumps({"question": f"q{i} " * 20, "answer": f"#### {i}"}).decode()
        for i in range(rows)
    )
    return orjson.dumps({"benchmark": "gsm8k", "text": lines, "format": "jsonl"})


def test_a_long_string_full_of_escaped_keys_parses_in_linear_time() -> None:
    body = _jsonl_in_a_string(20_000)  # ~2.6 MB, 40,000 escaped '"key":' in one string
    with _deadline(10):
        value = json_docs.loads(body)
    assert value["benchmark"] == "gsm8k" and value["text"].count("\n") == 19_999


def test_a_repeated_key_is_found_beside_strings_that_look_like_keys() -> None:
    body = b'{"text": "{\\"a\\": 1}", "x": 1,\n "x": 2}'
    with pytest.raises(json_docs.DuplicateKey, match=r"'x' .*line 2"):
        json_docs.loads(body)


def test_strings_holding_quote_colon_are_not_counted_as_keys() -> None:
    body = b'{"code": "d = {\\"k\\": 1}; s = \\":\\"", "n": [{"k": "v:"}, "\\"\\":"]}'
    assert json_docs.loads(body) == orjson.loads(body)
    assert json_docs._key_count(body) == 3


def test_integers_beyond_64_bits_stay_exact_in_a_body_with_strings() -> None:
    body = b'{"t": "\\"a\\":", "n": 123456789012345678901234567890}'
    assert json_docs.loads(body)["n"] == 123456789012345678901234567890
