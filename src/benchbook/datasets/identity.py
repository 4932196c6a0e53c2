"""Content identity: canonical JSON and SHA-256 hashes.

Canonical JSON = the *parsed* model dumped in JSON mode with defaults filled, keys sorted,
compact separators, UTF-8 (orjson ``OPT_SORT_KEYS``). A case's hash is the SHA-256 hex digest of
its canonical JSON. A version's content hash covers its metadata (id, version, description, tags,
produced_by) and the case hashes **sorted by case id** (code point order, which is also UTF-8
byte order): the order of cases is presentation, not identity (SPEC B). Identical content always
hashes the same no matter how the input was spelled (key order, defaults written out or omitted,
case order). Migration 0007 recomputed the hashes stored before case order stopped counting.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import orjson

from benchbook.contracts import Case, Dataset

_OPTS = orjson.OPT_SORT_KEYS


def canonical_json(value: Any) -> bytes:
    """Canonical JSON bytes of a JSON-compatible value (sorted keys, compact, UTF-8).

    Integers beyond 64 bits (which orjson refuses) are written with their exact decimal digits:
    JSON has no integer limit and an answer such as ``123456789012345678901234567890`` must
    survive (issue 8). ``tests/datasets/test_identity_golden.py`` pins the bytes.
    """
    try:
        return orjson.dumps(value, option=_OPTS)
    except orjson.JSONEncodeError as exc:
        if "64-bit" not in str(exc):
            raise
        return orjson.dumps(exact_ints(value), option=_OPTS)


_I64_MIN, _U64_MAX = -(2**63), 2**64 - 1


def exact_ints(value: Any) -> Any:
    """``value`` with every integer outside orjson's 64-bit range replaced by a raw JSON
    fragment of its digits (``orjson.Fragment``), so ``orjson.dumps`` writes it exactly."""
    if type(value) is int:
        return value if _I64_MIN <= value <= _U64_MAX else orjson.Fragment(str(value).encode())
    if isinstance(value, dict):
        return {k: exact_ints(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [exact_ints(v) for v in value]
    return value


def case_body(case: Case) -> bytes:
    """The canonical JSON bytes of a parsed case (its stored body)."""
    return canonical_json(case.model_dump(mode="json"))


def sha256_hex(data: bytes) -> str:
    """SHA-256 hex digest (64 lowercase hex chars)."""
    return hashlib.sha256(data).hexdigest()


def dataset_meta(dataset: Dataset) -> dict[str, Any]:
    """The content-bearing metadata of a version: everything but the cases."""
    return dataset.model_dump(mode="json", exclude={"cases"})


class VersionHasher:
    """Streams the content hash of a version: metadata first, then the case hashes, which the
    caller feeds **sorted by case id** (``store.datasets.case_hashes_by_id`` reads them so)."""

    def __init__(self, meta: dict[str, Any]) -> None:
        self._h = hashlib.sha256(canonical_json(meta))
        self._h.update(b"\n")
        self.count = 0

    def add(self, case_hash: str) -> None:
        """Append the hash (hex) of the case with the next case id in sorted order."""
        self._h.update(case_hash.encode("ascii"))
        self._h.update(b"\n")
        self.count += 1

    def add_many(self, case_hashes: list[str]) -> None:
        """:meth:`add` for each hash in order (one ``update``: the same bytes)."""
        if case_hashes:
            self._h.update(("\n".join(case_hashes) + "\n").encode("ascii"))
            self.count += len(case_hashes)

    def hexdigest(self) -> str:
        """The version content hash (hex)."""
        return self._h.hexdigest()


def version_hash(meta: dict[str, Any], cases: Iterable[tuple[str, str]]) -> str:
    """The content hash of a version from its metadata and ``(case_id, case_hash)`` pairs in any
    order (they are sorted by case id here; ids are unique within a version)."""
    hasher = VersionHasher(meta)
    hasher.add_many([h for _, h in sorted(cases)])
    return hasher.hexdigest()
