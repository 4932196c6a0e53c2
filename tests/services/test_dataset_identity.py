"""One notion of "same content" (SPEC B, issue 8 items 6-7): register, validate and diff agree.

Identity is the cases as a set matched by id plus the dataset metadata; the order of cases is
presentation, kept as first registered. On SQLite and PostgreSQL.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchbook.contracts import Dataset
from benchbook.errors import Conflict
from benchbook.services import datasets as svc
from benchbook.services.context import Context


def _case(case_id: str, task: str = "t", **fields: Any) -> dict[str, Any]:
    return {"id": case_id, "env": {"kind": "prompt"}, "task": task, **fields}


def _dataset(cases: list[dict[str, Any]], version: str = "1.0.0", **meta: Any) -> Dataset:
    return Dataset.model_validate({"id": "ds", "version": version, "cases": cases, **meta})


CASES = [_case("b", "2+2", expected="4"), _case("a", "1+1", expected="2"), _case("c", "3+3")]


def test_the_same_cases_in_another_order_are_the_same_version(ctx: Context) -> None:
    first = svc.register_dataset(ctx, _dataset(CASES))
    again = svc.register_dataset(ctx, _dataset(list(reversed(CASES))))
    assert (again.created, again.content_hash) == (False, first.content_hash)
    view = svc.get_dataset(ctx, "ds", "1.0.0")
    assert [c.id for c in view.cases] == ["b", "a", "c"]  # the order first registered


def test_validate_calls_the_same_cases_in_another_order_identical(ctx: Context) -> None:
    svc.register_dataset(ctx, _dataset(CASES))
    payload = _dataset(list(reversed(CASES))).model_dump(mode="json")
    report = svc.validate_dataset(ctx, payload)
    assert (report.ok, report.identical, report.would_conflict) == (True, True, False)


def test_two_versions_of_the_same_cases_in_another_order_hash_alike_but_for_the_version(
    ctx: Context,
) -> None:
    # The content hash covers the version string, so only equal diffs are comparable here.
    svc.register_dataset(ctx, _dataset(CASES))
    svc.register_dataset(ctx, _dataset(list(reversed(CASES)), version="1.0.1"))
    diff = svc.diff_datasets(ctx, "ds", "1.0.0", "1.0.1")
    assert (diff.summary.changed, diff.summary.added, diff.summary.removed, diff.meta) == (
        0,
        0,
        0,
        [],
    )


def test_a_conflict_says_how_many_cases_differ(ctx: Context) -> None:
    svc.register_dataset(ctx, _dataset(CASES))
    edited = [CASES[0], _case("a", "1+1", expected="3"), _case("d")]
    with pytest.raises(Conflict) as err:
        svc.register_dataset(ctx, _dataset(edited))
    assert "3 cases differ (1 added, 1 removed, 1 changed)" in err.value.message
    assert err.value.details["cases"] == {"added": 1, "removed": 1, "changed": 1}
    assert err.value.details["meta"] == []


def test_a_conflict_says_when_only_the_metadata_differs(ctx: Context) -> None:
    svc.register_dataset(ctx, _dataset(CASES, description="from a.csv"))
    with pytest.raises(Conflict) as err:
        svc.register_dataset(ctx, _dataset(CASES, description="from b.csv", tags=["x"]))
    assert "only the dataset metadata differs (description, tags)" in err.value.message
    assert err.value.details["meta"] == ["description", "tags"]
    assert err.value.details["cases"] == {"added": 0, "removed": 0, "changed": 0}


def test_validate_says_what_differs_too(ctx: Context) -> None:
    svc.register_dataset(ctx, _dataset(CASES))
    payload = _dataset([*CASES, _case("z")]).model_dump(mode="json")
    report = svc.validate_dataset(ctx, payload)
    assert report.would_conflict and "1 case differs (1 added)" in report.errors[0].message


# --- the property: conflict ⇔ diff non-empty ----------------------------------------------------

_IDS = ["a", "b", "c", "d", "é", "A", "a b", "10", "9"]
_counter = itertools.count()


def _shuffled_keys(value: Any, rng: random.Random) -> Any:
    """The same JSON value with every object's keys in a random order."""
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: _shuffled_keys(v, rng) for k, v in items}
    if isinstance(value, list):
        return [_shuffled_keys(v, rng) for v in value]
    return value


@st.composite
def _contents(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    ids = draw(st.lists(st.sampled_from(_IDS), min_size=0, max_size=6, unique=True))
    tasks = st.sampled_from(["t", "u", "2+2"])
    base_cases = [
        _case(i, draw(tasks), metadata={"n": draw(st.integers(0, 2)), "m": {"x": 1, "y": [1, 2]}})
        for i in ids
    ]
    base = {"description": draw(st.sampled_from([None, "d"])), "tags": ["a"], "cases": base_cases}
    cases = [dict(c) for c in base_cases]
    rng = random.Random(draw(st.integers(0, 2**32)))
    for _ in range(draw(st.integers(0, 2))):  # value edits
        edit = draw(st.sampled_from(["task", "metadata", "add", "remove", "desc", "tags"]))
        if edit in ("task", "metadata", "remove") and cases:
            k = draw(st.integers(0, len(cases) - 1))
            if edit == "task":
                cases[k] = {**cases[k], "task": draw(tasks)}
            elif edit == "metadata":
                cases[k] = {**cases[k], "metadata": {"n": draw(st.integers(0, 2)), "m": {"x": 1}}}
            else:
                cases.pop(k)
        elif edit == "add":
            free = [i for i in _IDS if i not in {c["id"] for c in cases}]
            if free:
                cases.append(_case(draw(st.sampled_from(free)), draw(tasks)))
    rng.shuffle(cases)  # a random reordering
    candidate = {**base, "cases": [_shuffled_keys(c, rng) for c in cases]}
    if draw(st.booleans()):
        candidate["description"] = draw(st.sampled_from([None, "d", "e"]))
    if draw(st.booleans()):
        candidate["tags"] = draw(st.sampled_from([["a"], ["b"], []]))
    return base, candidate


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(contents=_contents())
def test_register_conflicts_exactly_when_the_diff_is_not_empty(
    ctx: Context, contents: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    base, candidate = contents
    dataset_id = f"p{next(_counter)}"

    def as_dataset(body: dict[str, Any], version: str) -> Dataset:
        return Dataset.model_validate({"id": dataset_id, "version": version, **body})

    svc.register_dataset(ctx, as_dataset(base, "1.0.0"))
    svc.register_dataset(ctx, as_dataset(candidate, "2.0.0"))
    diff = svc.diff_datasets(ctx, dataset_id, "1.0.0", "2.0.0")
    differs = bool(diff.meta or diff.added or diff.removed or diff.changed)
    report = svc.validate_dataset(ctx, as_dataset(candidate, "1.0.0").model_dump(mode="json"))
    try:
        result = svc.register_dataset(ctx, as_dataset(candidate, "1.0.0"))
    except Conflict:
        conflict = True
    else:
        conflict = False
        assert not result.created
    assert conflict == differs == report.would_conflict == (not report.identical)


def test_a_diff_shows_a_changed_big_integer_answer_with_every_digit(ctx: Context) -> None:
    big = 123456789012345678901234567890
    svc.register_dataset(ctx, _dataset([_case("a", expected=big)]))
    svc.register_dataset(ctx, _dataset([_case("a", expected=big + 1)], version="1.0.1"))
    diff = svc.diff_datasets(ctx, "ds", "1.0.0", "1.0.1")
    [change] = diff.changed[0].changes
    assert (change.field, change.before, change.after) == ("expected", big, big + 1)


def test_a_diff_lists_cases_by_id_whatever_order_either_version_was_registered_in(
    ctx: Context,
) -> None:
    base = [_case(i) for i in ("m", "b", "z", "a", "q")]
    candidate = [
        _case("b", task="changed"),
        _case("y"),
        _case("m"),
        _case("c"),
        _case("q", task="x"),
    ]
    candidate += [_case("a", task="changed too")]
    diffs = []
    for n, (b, c) in enumerate([(base, candidate), (base[::-1], candidate[::-1])]):
        svc.register_dataset(ctx, _dataset(b).model_copy(update={"id": f"order{n}"}))
        svc.register_dataset(
            ctx, _dataset(c, version="2.0.0").model_copy(update={"id": f"order{n}"})
        )
        diff = svc.diff_datasets(ctx, f"order{n}", "1.0.0", "2.0.0")
        diffs.append(
            ([r.id for r in diff.added], [r.id for r in diff.removed], [c.id for c in diff.changed])
        )
    assert diffs[0] == diffs[1] == (["c", "y"], ["z"], ["a", "b", "q"])
