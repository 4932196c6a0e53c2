"""Version diff: compare body ids first, open bodies only for the ids that differ.

Bodies are stored once per content hash, so two cases share a body id exactly when their hashes
are equal: the comparison is integer equality and never reads a body of an unchanged case.

Field-level changes cover every case field and every ``metadata`` key (as ``metadata.<key>``);
values are compared as parsed JSON, so key order never counts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from pydantic import JsonValue

from benchbook.contracts.diff import CaseRef, ChangedCase, DatasetDiff, DiffSummary, FieldChange
from benchbook.datasets.identity import canonical_json
from benchbook.datasets.sources import json_docs

#: A content key: equal keys mean equal content (a body id, or a case hash).
K = TypeVar("K", int, str)
#: ``{case_id: (position, content key)}``; ``store.datasets.body_index`` gives body ids.
ContentIndex = dict[str, tuple[int, K]]
#: The same keyed by case hash.
HashIndex = dict[str, tuple[int, str]]

_META_FIELDS = ("description", "tags", "produced_by")


def _same(before: Any, after: Any) -> bool:
    """Equal as canonical JSON: Python's ``True == 1 == 1.0`` would hide a hash-visible change."""
    return before is after or canonical_json(before) == canonical_json(after)


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


def changed_meta_fields(base: dict[str, Any], candidate: dict[str, Any]) -> list[str]:
    """The names of the metadata fields (description, tags, produced_by) that differ."""
    return [f for f in _META_FIELDS if not _same(base.get(f), candidate.get(f))]


def meta_changes(base: dict[str, Any], candidate: dict[str, Any]) -> list[FieldChange]:
    """Changes in description, tags and produced_by between two versions."""
    return [
        FieldChange(field=f, before=base.get(f), after=candidate.get(f))
        for f in _META_FIELDS
        if not _same(base.get(f), candidate.get(f))
    ]


def _classify(b_idx: ContentIndex[K], c_idx: ContentIndex[K]) -> tuple[list[str], list[str], int]:
    """One pass over the candidate: ``(added ids, changed ids, unchanged count)``, the id lists
    sorted by case id."""
    added: list[str] = []
    changed: list[str] = []
    unchanged = 0
    before = b_idx.get
    for k, (_, key) in c_idx.items():
        b = before(k)
        if b is None:
            added.append(k)
        elif b[1] == key:
            unchanged += 1
        else:
            changed.append(k)
    added.sort()
    changed.sort()
    return added, changed, unchanged


def diff_versions(
    dataset_id: str,
    base: tuple[str, dict[str, Any], ContentIndex[K]],
    candidate: tuple[str, dict[str, Any], ContentIndex[K]],
    load_bodies: Callable[[list[K]], dict[K, bytes]],
    unchanged: int | None = None,
) -> DatasetDiff:
    """Diff two versions given ``(version, meta, content index)`` for each side.

    ``load_bodies`` fetches canonical bodies by content key; it is called once, only for cases
    that were added, removed or changed. Each list is ordered by case id (code point order of the
    id text), never by position: content identity ignores case order (issue 8), so the diff of
    two versions does not depend on how either was registered (issue 29).
    ``unchanged`` is given when the indexes hold only what differs (``store.datasets.diff_index``);
    without it, unchanged cases are counted from the full indexes.
    """
    (b_ver, b_meta, b_idx), (c_ver, c_meta, c_idx) = base, candidate
    added_ids, changed_ids, same = _classify(b_idx, c_idx)
    unchanged = same if unchanged is None else unchanged
    removed_ids = sorted(k for k in b_idx if k not in c_idx)
    need = [b_idx[k][1] for k in removed_ids + changed_ids] + [
        c_idx[k][1] for k in added_ids + changed_ids
    ]
    bodies = load_bodies(need) if need else {}

    def parsed(h: K) -> dict[str, Any]:
        value: dict[str, Any] = json_docs.loads(bodies[h])  # big integers stay exact
        return value

    def ref(k: str, idx: ContentIndex[K]) -> CaseRef:
        return CaseRef(id=k, task=str(parsed(idx[k][1]).get("task", "")))

    changed = [
        ChangedCase(id=k, changes=field_changes(parsed(b_idx[k][1]), parsed(c_idx[k][1])))
        for k in changed_ids
    ]
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


def count_case_differences(
    stored: Iterable[tuple[str, str]], incoming: Iterable[tuple[str, str]]
) -> dict[str, int]:
    """``{added, removed, changed}`` between two sets of ``(case_id, case_hash)`` pairs matched
    by id (the cases half of content identity, SPEC B; order never counts)."""
    before = dict(stored)
    added = changed = 0
    seen = 0
    for case_id, case_hash in incoming:
        old = before.get(case_id)
        if old is None:
            added += 1
        else:
            seen += 1
            changed += old != case_hash
    return {"added": added, "removed": len(before) - seen, "changed": changed}


def describe_difference(cases: dict[str, int], meta: list[str]) -> str:
    """What differs between two contents, for a conflict message: ``"3 cases differ (1 added,
    1 removed, 1 changed)"``, ``"only the dataset metadata differs (description, tags)"``, or
    both joined with "and"."""
    n = sum(cases.values())
    parts = ", ".join(f"{v} {k}" for k, v in cases.items() if v)
    said = f"{n} case{' differs' if n == 1 else 's differ'} ({parts})" if n else ""
    if not meta:
        return said
    fields = ", ".join(meta)
    if not n:
        return f"only the dataset metadata differs ({fields})"
    return f"{said} and the dataset metadata differs ({fields})"


def changed_leaves(changes: Iterable[FieldChange]) -> Iterator[tuple[str, JsonValue, JsonValue]]:
    """The changed leaves of field changes as ``(path, before, after)``.

    A field whose value is an object on both sides (``produced_by``, a ``metadata`` dict)
    yields only the keys that differ, recursively (``produced_by.source.sha256``); a list of
    the same length on both sides yields its differing items (``metadata.tests[3]``); any other
    change yields itself. Equality is canonical JSON's (``1`` and ``true`` differ).
    """
    for change in changes:
        yield from _leaves(change.field, change.before, change.after)


def _leaves(
    path: str, before: JsonValue, after: JsonValue
) -> Iterator[tuple[str, JsonValue, JsonValue]]:
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(before.keys() | after.keys()):
            yield from _leaves(f"{path}.{key}", before.get(key), after.get(key))
    elif isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        for index, (old, new) in enumerate(zip(before, after, strict=True)):
            yield from _leaves(f"{path}[{index}]", old, new)
    elif not _same(before, after):
        yield path, before, after
