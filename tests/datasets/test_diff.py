"""Version diff as a pure function: hashes first, field-level changes for changed ids only."""

from __future__ import annotations

from typing import Any

import orjson

from benchbook.contracts import Case
from benchbook.datasets.diff import HashIndex, diff_versions, field_changes, meta_changes
from benchbook.datasets.identity import case_body, sha256_hex


def _body(case_id: str, **fields: Any) -> bytes:
    return case_body(
        Case.model_validate({"id": case_id, "env": {"kind": "prompt"}, "task": "t", **fields})
    )


Side = tuple[str, dict[str, Any], HashIndex, dict[str, bytes]]


def _side(version: str, bodies: list[bytes]) -> Side:
    """``(version, meta, hash index, {hash: body})`` of a version made of ``bodies``."""
    index: HashIndex = {}
    store: dict[str, bytes] = {}
    for pos, body in enumerate(bodies):
        h = sha256_hex(body)
        index[orjson.loads(body)["id"]] = (pos, h)
        store[h] = body
    return version, {"description": None, "tags": [], "produced_by": None}, index, store


def test_added_removed_changed_and_unchanged_are_counted_and_only_needed_bodies_load() -> None:
    b_ver, b_meta, b_idx, b_store = _side(
        "1.0.0", [_body("keep"), _body("gone", task="old"), _body("edit", expected="1")]
    )
    c_ver, c_meta, c_idx, c_store = _side(
        "1.1.0", [_body("keep"), _body("edit", expected="2"), _body("new", task="fresh")]
    )
    requested: list[str] = []

    def load(hashes: list[str]) -> dict[str, bytes]:
        requested.extend(hashes)
        return {h: {**b_store, **c_store}[h] for h in hashes}

    diff = diff_versions("ds", (b_ver, b_meta, b_idx), (c_ver, c_meta, c_idx), load)
    assert diff.summary.model_dump() == {"added": 1, "removed": 1, "changed": 1, "unchanged": 1}
    assert [(r.id, r.task) for r in diff.added] == [("new", "fresh")]
    assert [(r.id, r.task) for r in diff.removed] == [("gone", "old")]
    assert [(c.id, [(f.field, f.before, f.after) for f in c.changes]) for c in diff.changed] == [
        ("edit", [("expected", "1", "2")])
    ]
    assert b_idx["keep"][1] not in requested


def test_metadata_changes_are_reported_per_key() -> None:
    changes = field_changes(
        {"task": "t", "metadata": {"level": 1, "same": "x", "dropped": True}},
        {"task": "t", "metadata": {"level": 2, "same": "x", "added": [1]}},
    )
    assert [(c.field, c.before, c.after) for c in changes] == [
        ("metadata.level", 1, 2),
        ("metadata.dropped", True, None),
        ("metadata.added", None, [1]),
    ]


def test_key_order_inside_values_never_counts_as_a_change() -> None:
    before = {"metadata": {"obj": {"a": 1, "b": 2}}, "env": {"kind": "prompt", "context": None}}
    after = {"env": {"context": None, "kind": "prompt"}, "metadata": {"obj": {"b": 2, "a": 1}}}
    assert field_changes(before, after) == []


def test_a_boolean_replaced_by_a_number_is_a_change() -> None:
    # Python says True == 1 and 1 == 1.0, but the canonical JSON (and so the hash) differs.
    changes = field_changes(
        {"metadata": {"flag": True, "score": 1, "ids": [1, 0]}},
        {"metadata": {"flag": 1, "score": 1.0, "ids": [True, False]}},
    )
    assert [c.field for c in changes] == ["metadata.flag", "metadata.score", "metadata.ids"]


def test_every_changed_case_lists_at_least_one_field_change() -> None:
    base = _side("1.0.0", [_body("a", metadata={"flag": True})])
    cand = _side("1.0.1", [_body("a", metadata={"flag": 1})])
    bodies = {**base[3], **cand[3]}
    diff = diff_versions("ds", base[:3], cand[:3], lambda hs: {h: bodies[h] for h in hs})
    assert diff.summary.changed == 1
    assert diff.changed[0].changes[0].field == "metadata.flag"


def test_meta_changes_cover_description_tags_and_produced_by() -> None:
    changes = meta_changes(
        {"description": "a", "tags": ["x"], "produced_by": {"via": "spec", "id": "d"}},
        {"description": "b", "tags": ["x", "y"], "produced_by": {"id": "d", "via": "recipe"}},
    )
    assert [c.field for c in changes] == ["description", "tags", "produced_by"]


def test_meta_key_order_never_counts() -> None:
    assert (
        meta_changes(
            {"description": None, "tags": [], "produced_by": {"via": "spec", "id": "d"}},
            {"description": None, "tags": [], "produced_by": {"id": "d", "via": "spec"}},
        )
        == []
    )
