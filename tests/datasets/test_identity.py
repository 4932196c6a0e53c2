"""Content identity (SPEC B, DESIGN "Identity of content"): canonical JSON and hashes."""

from __future__ import annotations

import math
from typing import Any

import orjson
import pytest

from benchbook.contracts import Case, Dataset
from benchbook.datasets.case_bodies import CaseCanonicalizer
from benchbook.datasets.identity import (
    VersionHasher,
    canonical_json,
    case_body,
    dataset_meta,
    sha256_hex,
    version_hash,
)


def _case_hash(payload: dict[str, Any]) -> str:
    return sha256_hex(case_body(Case.model_validate(payload)))


def _dataset_hash(payload: dict[str, Any]) -> str:
    dataset = Dataset.model_validate(payload)
    return version_hash(
        dataset_meta(dataset), ((c.id, sha256_hex(case_body(c))) for c in dataset.cases)
    )


SPARSE_CASE: dict[str, Any] = {
    "id": "q1",
    "env": {"kind": "repo", "source": {"git": "https://github.com/a/b", "ref": "main"}},
    "task": "Fix the bug",
    "metadata": {"level": 3, "nested": {"b": 2, "a": 1}},
}
DEFAULTS_WRITTEN_OUT: dict[str, Any] = {
    "metadata": {"nested": {"a": 1, "b": 2}, "level": 3},
    "timeout_s": 1800,
    "tags": [],
    "graders": [],
    "gold_fields": [],
    "network": None,
    "placement": None,
    "resources": None,
    "image": None,
    "milestones": None,
    "expected": None,
    "task": "Fix the bug",
    "env": {
        "source": {"ref": "main", "git": "https://github.com/a/b"},
        "setup": [],
        "kind": "repo",
    },
    "id": "q1",
}
BASE_DATASET: dict[str, Any] = {
    "id": "ds",
    "version": "1.0.0",
    "description": "two cases",
    "tags": ["math"],
    "cases": [
        {"id": "a", "env": {"kind": "prompt"}, "task": "1+1", "expected": "2"},
        {"id": "b", "env": {"kind": "prompt"}, "task": "2+2", "expected": "4"},
    ],
    "produced_by": {"via": "spec", "id": "ds"},
}


def test_a_case_with_defaults_written_out_hashes_like_the_same_case_with_them_omitted() -> None:
    assert _case_hash(SPARSE_CASE) == _case_hash(DEFAULTS_WRITTEN_OUT)


def test_key_order_never_changes_a_case_hash() -> None:
    reordered = dict(reversed(list(SPARSE_CASE.items())))
    reordered["metadata"] = {"nested": {"a": 1, "b": 2}, "level": 3}
    assert list(reordered) != list(SPARSE_CASE)
    assert _case_hash(reordered) == _case_hash(SPARSE_CASE)


def test_a_case_body_is_compact_sorted_utf8_json() -> None:
    body = case_body(Case.model_validate({"id": "é", "env": {"kind": "prompt"}, "task": "ü"}))
    assert body.startswith(b'{"env":{"context":null,"kind":"prompt"},"expected":null')
    assert "é".encode() in body and b" " not in body.replace("é".encode(), b"")
    parsed = orjson.loads(body)
    assert list(parsed) == sorted(parsed)
    assert canonical_json(parsed) == body


def test_a_different_value_changes_a_case_hash() -> None:
    changed = {**SPARSE_CASE, "metadata": {"level": 4, "nested": {"a": 1, "b": 2}}}
    assert _case_hash(changed) != _case_hash(SPARSE_CASE)


def test_a_dataset_spelled_with_defaults_and_other_key_order_has_the_same_content_hash() -> None:
    spelled = {
        "produced_by": {
            "scoring": None,
            "origin": None,
            "source": None,
            "version": None,
            "id": "ds",
            "via": "spec",
        },
        "cases": [
            {**c, "timeout_s": 1800, "metadata": {}, "graders": []} for c in BASE_DATASET["cases"]
        ],
        "tags": ["math"],
        "description": "two cases",
        "version": "1.0.0",
        "id": "ds",
    }
    assert _dataset_hash(spelled) == _dataset_hash(BASE_DATASET)


def test_case_order_never_changes_a_version_content_hash() -> None:
    reordered = {**BASE_DATASET, "cases": list(reversed(BASE_DATASET["cases"]))}
    assert _dataset_hash(reordered) == _dataset_hash(BASE_DATASET)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("cases", [{**BASE_DATASET["cases"][0], "task": "1+2"}, BASE_DATASET["cases"][1]]),
        ("description", "two cases, reworded"),
        ("description", None),
        ("tags", ["math", "qa"]),
        ("tags", []),
        ("produced_by", {"via": "recipe", "id": "ds"}),
        ("produced_by", None),
        ("version", "1.0.1"),
    ],
)
def test_a_version_content_hash_changes_with_case_content_and_metadata(
    field: str, value: Any
) -> None:
    assert _dataset_hash({**BASE_DATASET, field: value}) != _dataset_hash(BASE_DATASET)


def test_a_version_content_hash_is_stable_across_calls() -> None:
    assert _dataset_hash(BASE_DATASET) == _dataset_hash(dict(BASE_DATASET))
    assert len(_dataset_hash(BASE_DATASET)) == 64


def test_hashes_added_in_chunks_give_the_version_hash_of_adding_them_one_by_one() -> None:
    meta = dataset_meta(Dataset.model_validate({"id": "d", "version": "1.0.0"}))
    hashes = [sha256_hex(str(i).encode()) for i in range(7)]
    one_by_one, chunked = VersionHasher(meta), VersionHasher(meta)
    for h in hashes:
        one_by_one.add(h)
    for chunk in (hashes[:3], [], hashes[3:]):
        chunked.add_many(chunk)
    assert chunked.hexdigest() == one_by_one.hexdigest()
    assert chunked.count == one_by_one.count == 7


def _fast_body(case: dict[str, Any]) -> bytes:
    """The import fast path's body for ``case``, past its always-checked first row."""
    canonicalizer = CaseCanonicalizer()
    canonicalizer.body({"id": "first", "env": {"kind": "prompt"}, "task": "t"})
    return canonicalizer.body(case)


@pytest.mark.parametrize(
    "case",
    [
        {"id": "a", "env": {"kind": "prompt"}, "task": "t", "metadata": {"n": 1, "s": "x"}},
        {"id": "b", "env": {"kind": "browser", "start_url": " https://x.org/ "}, "task": "t"},
        {"id": "c", "env": {"kind": "repo", "source": {"git": "https://g.io/r", "ref": "v1"}},
         "task": "t", "tags": [" a ", "a"], "expected": "4"},
    ],
)  # fmt: skip
def test_the_import_fast_path_writes_the_same_body_as_the_contract(case: dict[str, Any]) -> None:
    assert _fast_body(case) == case_body(Case.model_validate(case))


_WEB = {"kind": "browser", "start_url": "https://example.org/"}


@pytest.mark.parametrize(
    "case",
    [
        {"id": "nul\x00id", "env": _WEB, "task": "t"},
        {"id": "tab\tid", "env": _WEB, "task": "t"},
        {"id": "a", "env": _WEB, "task": "t", "metadata": {"x": float("nan")}},
        {"id": "a", "env": _WEB, "task": "t", "metadata": {"x": [float("inf")]}},
        {"id": "a", "env": _WEB, "task": "t", "metadata": {"x": {"y": -math.inf}}},
    ],
)
def test_the_import_fast_path_rejects_what_the_contract_rejects(case: dict[str, Any]) -> None:
    # A silently stored null (for NaN) or a raw PostgreSQL error (for NUL) is the failure mode.
    with pytest.raises(ValueError):
        _fast_body(case)


@pytest.mark.parametrize(
    "case",
    [
        {"id": "nul\x00id", "env": _WEB, "task": "t"},
        {"id": "a", "env": _WEB, "task": "t", "metadata": {"x": float("nan")}},
    ],
)
def test_the_trusted_import_path_rejects_what_the_contract_rejects(case: dict[str, Any]) -> None:
    canonicalizer = CaseCanonicalizer()
    canonicalizer.body({"id": "first", "env": _WEB, "task": "t"}, trusted=True)
    with pytest.raises(ValueError):
        canonicalizer.body({**canonicalizer.defaults, **case}, trusted=True)
