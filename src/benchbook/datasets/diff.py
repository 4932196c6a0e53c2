"""Version diff: compare hashes first, open bodies only for the ids that differ.

Field-level changes cover every case field and every ``metadata`` key (as ``metadata.<key>``);
values are compared as parsed JSON, so key order never counts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from benchbook.contracts.diff import CaseRef, ChangedCase, DatasetDiff, DiffSummary, FieldChange

#: ``{case_id: (position, case_hash)}``
HashIndex = dict[str, tuple[int, str]]

_META_FIELDS = ("description", "tags", "produced_by")


def _same(before: Any, after: Any) -> bool:
    """Equal as canonical JSON: Python's ``True == 1 == 1.0`` would hide a hash-visible change."""
    return before is after or orjson.dumps(before, option=orjson.OPT_SORT_KEYS) == orjson.dumps(
        after, option=orjson.OPT_SORT_KEYS
    )


def field_changes(before: dict[str, Any], after: dict[str, Any]) -> list[FieldChange]:
    """Per-field changes between two case bodies; ``metadata`` is compared key by key."""
    out: list[FieldChange] = []
    keys = list(dict.fromkeys([*before, *after]))
    for key in keys:
        b, a = before.get(key), after.get(key)
        if key == "metadata" and isinstance(b, dict) and isinstance(a, dict):
            for mk in dict.fromkeys([*b, *a]):
                if not _same(b.get(mk), a.get(mk)):
                    out.append(
                        FieldChange(field=f"metadata.{mk}", before=b.get(mk), after=a.get(mk))
                    )
        elif not _same(b, a):
            out.append(FieldChange(field=key, before=b, after=a))
    return out


def meta_changes(base: dict[str, Any], candidate: dict[str, Any]) -> list[FieldChange]:
    """Changes in description, tags and produced_by between two versions."""
    return [
        FieldChange(field=f, before=base.get(f), after=candidate.get(f))
        for f in _META_FIELDS
        if not _same(base.get(f), candidate.get(f))
    ]


def diff_versions(
    dataset_id: str,
    base: tuple[str, dict[str, Any], HashIndex],
    candidate: tuple[str, dict[str, Any], HashIndex],
    load_bodies: Callable[[list[str]], dict[str, bytes]],
) -> DatasetDiff:
    """Diff two versions given ``(version, meta, hash index)`` for each side.

    ``load_bodies`` fetches canonical bodies by hash; it is called once, only for cases that were
    added, removed or changed. Lists are in the order of each version's positions.
    """
    (b_ver, b_meta, b_idx), (c_ver, c_meta, c_idx) = base, candidate
    removed_ids = sorted((k for k in b_idx if k not in c_idx), key=lambda k: b_idx[k][0])
    added_ids = sorted((k for k in c_idx if k not in b_idx), key=lambda k: c_idx[k][0])
    changed_ids = sorted(
        (k for k, (_, h) in c_idx.items() if k in b_idx and b_idx[k][1] != h),
        key=lambda k: c_idx[k][0],
    )
    need = [b_idx[k][1] for k in removed_ids + changed_ids] + [
        c_idx[k][1] for k in added_ids + changed_ids
    ]
    bodies = load_bodies(need) if need else {}

    def parsed(h: str) -> dict[str, Any]:
        value: dict[str, Any] = orjson.loads(bodies[h])
        return value

    def ref(k: str, idx: HashIndex) -> CaseRef:
        return CaseRef(id=k, task=str(parsed(idx[k][1]).get("task", "")))

    changed = [
        ChangedCase(id=k, changes=field_changes(parsed(b_idx[k][1]), parsed(c_idx[k][1])))
        for k in changed_ids
    ]
    unchanged = sum(1 for k, (_, h) in c_idx.items() if k in b_idx and b_idx[k][1] == h)
    return DatasetDiff(
        id=dataset_id,
        base=b_ver,
        candidate=c_ver,
        meta=meta_changes(b_meta, c_meta),
        added=[ref(k, c_idx) for k in added_ids],
        removed=[ref(k, b_idx) for k in removed_ids],
        changed=changed,
        unchanged=unchanged,
        summary=DiffSummary(
            added=len(added_ids),
            removed=len(removed_ids),
            changed=len(changed),
            unchanged=unchanged,
        ),
    )
