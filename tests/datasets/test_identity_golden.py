"""Pinned identity (issue 8 item 9): fixed SHA-256 values for canonical JSON, a case and a
version. A change to any of these changes every stored hash: it needs a migration (see 0007)
and a new pin here, never a silent pass."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from benchbook.contracts import Case, Dataset
from benchbook.datasets.identity import canonical_json, case_body, dataset_meta, version_hash


@pytest.mark.parametrize(
    ("value", "canonical", "sha256"),
    [
        pytest.param(
            {"b": 1, "a": [1, 1.0, -0.5, 1e100, 1e-7, True, None]},
            b'{"a":[1,1.0,-0.5,1e+100,1e-7,true,null],"b":1}',
            "15cac98657be8fa2e92d1cdd7c1e984a69a2996ce7cd710a7ff3700b1ca056a7",
            id="key order, int vs float, exponents, literals",
        ),
        pytest.param(
            "\u00e9",
            b'"\xc3\xa9"',
            "f2886017e9c7abacf804b54d64787dce2b611c9544ba21f3affdd126a6e50086",
            id="NFC e-acute",
        ),
        pytest.param(
            "e\u0301",
            b'"e\xcc\x81"',
            "3d68ce21f2899a475713cdbe7562ba9bdb6b1dfde8af1f221bdff4a0935b53b2",
            id="NFD e + combining acute, kept distinct",
        ),
        pytest.param(
            '"\\\x00\n\t\x1f\x7f\u2028/<>&',
            b'"\\"\\\\\\u0000\\n\\t\\u001f\x7f\xe2\x80\xa8/<>&"',
            "a9e8624343857138e97addf3206bc321f365f088d39d4984357c02dd9e0c8c36",
            id="escapes: quote, backslash, controls escaped; DEL, U+2028, / < > & raw",
        ),
        pytest.param(
            2**64 - 1,
            b"18446744073709551615",
            "2cdb26265b4dc65e3b44d694f121fd6de99b9e4b8ae7f08d84bfa9537635ae43",
            id="largest unsigned 64-bit int",
        ),
        pytest.param(
            -(2**63),
            b"-9223372036854775808",
            "85386477f3af47e4a0b308ee3b3a688df16e8b2228105dd7d4dcd42a9807cb78",
            id="smallest signed 64-bit int",
        ),
        pytest.param(
            {"answer": 123456789012345678901234567890, "neg": -(2**70)},
            b'{"answer":123456789012345678901234567890,"neg":-1180591620717411303424}',
            "e7d5c69a9a431487423d6dfb0dce2718a9c7735e68715adebe41a4c5c0ed09d8",
            id="integers beyond 64 bits, exact digits",
        ),
    ],
)
def test_canonical_json_and_its_sha256_are_pinned(
    value: Any, canonical: bytes, sha256: str
) -> None:
    assert canonical_json(value) == canonical
    assert hashlib.sha256(canonical).hexdigest() == sha256


CASE_Q1 = {
    "id": "q1",
    "env": {"kind": "prompt"},
    "task": "What is 2+2?",
    "expected": "4",
    "metadata": {"level": 1},
}
CASE_Q1_BODY = (
    b'{"env":{"context":null,"kind":"prompt"},"expected":"4","gold_fields":[],"graders":[],'
    b'"id":"q1","image":null,"metadata":{"level":1},"milestones":null,"network":null,'
    b'"placement":null,"resources":null,"tags":[],"task":"What is 2+2?","timeout_s":1800}'
)
CASE_Q1_SHA256 = "2b091d1093539e0de37651890ee57862b4d5a99158c3c1aeb3a451484a02c95b"
CASE_Q2_SHA256 = "8e47f8d35e6cf9a767d5f7b62ee94364e06a42e3fef8eb3f5e243707c74697fd"


def test_a_case_body_and_hash_are_pinned() -> None:
    body = case_body(Case.model_validate(CASE_Q1))
    assert body == CASE_Q1_BODY
    assert hashlib.sha256(body).hexdigest() == CASE_Q1_SHA256


def test_a_version_content_hash_is_pinned() -> None:
    dataset = Dataset.model_validate(
        {
            "id": "arith",
            "version": "1.0.0",
            "description": "Two arithmetic questions",
            "tags": ["math"],
            "cases": [
                {"id": "q2", "env": {"kind": "prompt"}, "task": "What is 3*3?", "expected": "9"},
                CASE_Q1,
            ],
        }
    )
    meta = canonical_json(dataset_meta(dataset))
    assert meta == (
        b'{"description":"Two arithmetic questions","id":"arith","produced_by":null,'
        b'"tags":["math"],"version":"1.0.0"}'
    )
    pairs = [(c.id, hashlib.sha256(case_body(c)).hexdigest()) for c in dataset.cases]
    assert pairs == [("q2", CASE_Q2_SHA256), ("q1", CASE_Q1_SHA256)]
    # The definition: meta, then each case hash sorted by case id, each line ending in "\n".
    spelled = meta + b"\n" + f"{CASE_Q1_SHA256}\n{CASE_Q2_SHA256}\n".encode()
    expected = "3b48a63d55d80719750a7546adb62c6bc5da38e91835ad1ce230ec4b4f0a888c"
    assert hashlib.sha256(spelled).hexdigest() == expected
    assert version_hash(dataset_meta(dataset), pairs) == expected
