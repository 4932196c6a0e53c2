"""Grader and plan hashes (SPEC H.5, H.9) and which graders apply to a case."""

from __future__ import annotations

import hashlib
import json

from benchbook.contracts import Case, GraderSpec
from benchbook.contracts.run import RunPlan
from benchbook.eval.plans import effective_graders, grader_hash, plan_hash

A = GraderSpec(id="regex", config={"pattern": "^x$", "ignore_case": True})
B = GraderSpec(id="steps", config={"max": 3})


def _oracle(value: object) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def test_a_grader_hash_is_the_sha256_of_its_canonical_json_with_defaults() -> None:
    expected = _oracle({"id": "steps", "config": {"max": 3}, "direction": None})
    assert grader_hash(B) == expected


def test_a_grader_hash_is_stable_under_key_order() -> None:
    reordered = GraderSpec(id="regex", config={"ignore_case": True, "pattern": "^x$"})
    assert grader_hash(reordered) == grader_hash(A)


def test_the_plan_hash_changes_when_a_grader_config_changes() -> None:
    changed = GraderSpec(id="steps", config={"max": 4})
    assert plan_hash(RunPlan(graders=[A, B])) != plan_hash(RunPlan(graders=[A, changed]))


def test_the_plan_hash_covers_the_ordered_grader_hashes() -> None:
    assert plan_hash(RunPlan(graders=[A, B])) == _oracle([grader_hash(A), grader_hash(B)])
    assert plan_hash(RunPlan(graders=[A, B])) != plan_hash(RunPlan(graders=[B, A]))
    assert plan_hash(RunPlan()) == _oracle([])


def test_a_plan_with_graders_replaces_the_case_graders() -> None:
    case = Case(id="c", env={"kind": "prompt"}, task="t", graders=[B])
    assert effective_graders(RunPlan(graders=[A]), case) == [A]
    assert effective_graders(RunPlan(), case) == [B]
