"""Registry rules of SPEC B through the dataset services, on SQLite and PostgreSQL.

Every test reads the registry back (or counts stored rows) instead of trusting return values.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import orjson
import pytest
from sqlalchemy import Engine, Table, event, func, select

from benchbook.contracts import Case, Dataset
from benchbook.contracts.registry import RegisterResult
from benchbook.datasets.identity import case_body, dataset_meta, sha256_hex
from benchbook.errors import Conflict, Forbidden, InvalidInput, NotFound
from benchbook.services import datasets as svc
from benchbook.services.authz import Role
from benchbook.services.context import Context, Principal
from benchbook.store.tables import case_bodies, dataset_versions, version_cases, version_tags

TABLES = (case_bodies, version_cases, dataset_versions, version_tags)


def _case(case_id: str, task: str = "2+2?", **fields: Any) -> dict[str, Any]:
    return {"id": case_id, "env": {"kind": "prompt"}, "task": task, **fields}


def _dataset(
    version: str = "1.0.0", cases: list[dict[str, Any]] | None = None, **meta: Any
) -> Dataset:
    body = {"id": "ds", "version": version, **meta}
    body["cases"] = cases if cases is not None else [_case("a", expected="4"), _case("b")]
    return Dataset.model_validate(body)


def _counts(engine: Engine) -> dict[str, int]:
    with engine.connect() as conn:
        return {t.name: int(conn.scalar(select(func.count()).select_from(t)) or 0) for t in TABLES}


def _count(engine: Engine, table: Table) -> int:
    return _counts(engine)[table.name]


def _as(ctx: Context, user: str, workspace: str = "default", role: Role = "member") -> Context:
    """Another principal on the same database."""
    principal = Principal(user_id=user, display_name=user, workspace=workspace, role=role)
    return Context(principal=principal, engine=ctx.engine, settings=ctx.settings)


def _listed(ctx: Context) -> list[tuple[str, str, str]]:
    return [(s.id, s.workspace, s.latest) for s in svc.list_datasets(ctx).items]


def _versions(ctx: Context, dataset_id: str = "ds") -> list[str]:
    return [v.version for v in svc.list_dataset_versions(ctx, dataset_id)]


def _rows(cases: list[dict[str, Any]]) -> Iterator[tuple[str, bytes, str]]:
    for payload in cases:
        body = case_body(Case.model_validate(payload))
        yield payload["id"], body, sha256_hex(body)


# --- immutability and identity -------------------------------------------------------------


def test_an_identical_re_register_is_a_no_op_that_stores_nothing_new(ctx: Context) -> None:
    first = svc.register_dataset(ctx, _dataset())
    before = _counts(ctx.engine)
    again = svc.register_dataset(ctx, _dataset())
    assert first.created and not again.created and not again.revived
    assert again.content_hash == first.content_hash
    assert _counts(ctx.engine) == before
    assert before["version_cases"] == 2 and before["dataset_versions"] == 1


def test_the_same_content_spelled_differently_is_an_identical_re_register(ctx: Context) -> None:
    svc.register_dataset(ctx, _dataset())
    spelled = Dataset.model_validate(
        {
            "cases": [
                {
                    "task": "2+2?",
                    "env": {"context": None, "kind": "prompt"},
                    "id": "a",
                    "expected": "4",
                    "timeout_s": 1800,
                    "metadata": {},
                    "tags": [],
                },
                {
                    "metadata": {},
                    "graders": [],
                    "task": "2+2?",
                    "id": "b",
                    "env": {"kind": "prompt"},
                },
            ],
            "tags": [],
            "description": None,
            "version": "1.0.0",
            "id": "ds",
        }
    )
    assert svc.register_dataset(ctx, spelled).created is False


def test_different_content_under_an_existing_version_is_a_conflict_naming_it(
    ctx: Context,
) -> None:
    svc.register_dataset(ctx, _dataset())
    before = _counts(ctx.engine)
    with pytest.raises(Conflict) as err:
        svc.register_dataset(ctx, _dataset(cases=[_case("a", expected="5"), _case("b")]))
    assert "ds@1.0.0" in err.value.message
    assert _counts(ctx.engine) == before
    stored = svc.get_dataset(ctx, "ds", "1.0.0")
    assert stored.cases[0].expected == "4"


@pytest.mark.parametrize("meta", [{"description": "new words"}, {"tags": ["math"]}])
def test_a_metadata_change_under_an_existing_version_is_a_conflict(
    ctx: Context, meta: dict[str, Any]
) -> None:
    svc.register_dataset(ctx, _dataset())
    with pytest.raises(Conflict):
        svc.register_dataset(ctx, _dataset(**meta))


def test_case_bodies_are_stored_once_per_content_hash(ctx: Context) -> None:
    svc.register_dataset(ctx, _dataset("1.0.0"))
    svc.register_dataset(ctx, _dataset("1.1.0", cases=[_case("a", expected="4"), _case("c")]))
    # a(4) and b share one body each; "c" differs from "b" only by id, so it is a new body.
    assert _count(ctx.engine, case_bodies) == 3
    assert _count(ctx.engine, version_cases) == 4


# --- soft delete and revive -----------------------------------------------------------------


def test_a_deleted_version_is_hidden_from_every_read(ctx: Context) -> None:
    svc.register_dataset(ctx, _dataset("1.0.0"))
    svc.register_dataset(ctx, _dataset("2.0.0", cases=[_case("a")]))
    svc.delete_dataset_version(ctx, "ds", "2.0.0")
    with pytest.raises(NotFound):
        svc.get_dataset(ctx, "ds", "2.0.0")
    with pytest.raises(NotFound):
        svc.diff_datasets(ctx, "ds", "1.0.0", "2.0.0")
    with pytest.raises(NotFound):
        svc.export_dataset(ctx, "ds", "2.0.0")
    assert _versions(ctx) == ["1.0.0"]
    assert svc.get_dataset(ctx, "ds").version.version == "1.0.0"
    assert _listed(ctx) == [("ds", "default", "1.0.0")]
    svc.delete_dataset_version(ctx, "ds", "1.0.0")
    assert _listed(ctx) == []
    with pytest.raises(NotFound):
        svc.get_dataset(ctx, "ds", "latest")
    with pytest.raises(NotFound):
        svc.list_dataset_versions(ctx, "ds")


def test_a_delete_keeps_the_stored_bytes(ctx: Context) -> None:
    svc.register_dataset(ctx, _dataset())
    before = _counts(ctx.engine)
    svc.delete_dataset_version(ctx, "ds", "1.0.0")
    assert _counts(ctx.engine) == before


def test_identical_content_revives_a_deleted_version_keeping_the_original_creator(
    ctx: Context,
) -> None:
    alice, bob = _as(ctx, "alice"), _as(ctx, "bob")
    svc.register_dataset(alice, _dataset())
    svc.delete_dataset_version(alice, "ds", "1.0.0")
    before = _counts(ctx.engine)
    result = svc.register_dataset(bob, _dataset())
    assert (result.created, result.revived) == (False, True)
    assert _counts(ctx.engine) == before
    info = svc.get_dataset(bob, "ds", "1.0.0").version
    assert info.created_by == "alice"
    kinds = [(i.kind, i.actor) for i in svc.get_dataset_activity(ctx, "ds").items]
    assert kinds == [("revived", "bob"), ("deleted", "alice"), ("registered", "alice")]


def test_different_content_on_a_deleted_version_is_still_a_conflict(ctx: Context) -> None:
    svc.register_dataset(ctx, _dataset())
    svc.delete_dataset_version(ctx, "ds", "1.0.0")
    with pytest.raises(Conflict, match=r"ds@1\.0\.0"):
        svc.register_dataset(ctx, _dataset(cases=[_case("z")]))
    assert svc.list_datasets(ctx).total == 0


def test_a_bulk_delete_with_one_missing_version_deletes_nothing(ctx: Context) -> None:
    for version in ("1.0.0", "1.1.0"):
        svc.register_dataset(ctx, _dataset(version))
    with pytest.raises(NotFound, match=r"ds@9\.9\.9"):
        svc.delete_dataset_versions(ctx, "ds", ["1.0.0", "9.9.9", "1.1.0"])
    assert _versions(ctx) == ["1.1.0", "1.0.0"]


def test_a_bulk_delete_with_one_forbidden_version_deletes_nothing(ctx: Context) -> None:
    alice, bob = _as(ctx, "alice"), _as(ctx, "bob")
    svc.register_dataset(alice, _dataset("1.0.0"))
    svc.register_dataset(bob, _dataset("1.1.0"))
    with pytest.raises(Forbidden):
        svc.delete_dataset_versions(bob, "ds", ["1.1.0", "1.0.0"])
    assert _versions(ctx) == ["1.1.0", "1.0.0"]
    assert svc.delete_dataset_versions(bob, "ds", ["1.1.0"]).deleted == ["1.1.0"]


@pytest.mark.parametrize("ref", ["latest", "prod"])
def test_a_delete_needs_an_exact_version_not_latest_or_a_tag(ctx: Context, ref: str) -> None:
    svc.register_dataset(ctx, _dataset())
    svc.set_dataset_version_tags(ctx, "ds", "1.0.0", ["prod"])
    with pytest.raises(NotFound, match="needs an exact SemVer version") as raised:
        svc.delete_dataset_version(ctx, "ds", ref)
    assert raised.value.code == "not_found"
    assert raised.value.details == {"id": "ds", "version": ref}
    assert _versions(ctx) == ["1.0.0"]


# --- SemVer order and latest ----------------------------------------------------------------


def test_versions_are_listed_and_resolved_by_semver_precedence(ctx: Context) -> None:
    for version in ("1.10.0", "1.2.0", "1.9.0"):
        svc.register_dataset(ctx, _dataset(version))
    assert _versions(ctx) == ["1.10.0", "1.9.0", "1.2.0"]
    assert svc.get_dataset(ctx, "ds", "latest").version.version == "1.10.0"
    assert [v.is_latest for v in svc.list_dataset_versions(ctx, "ds")] == [True, False, False]
    assert _listed(ctx) == [("ds", "default", "1.10.0")]


def test_listing_versions_reads_their_tags_in_one_query(ctx: Context, engine: Engine) -> None:
    """The statements of ``list_dataset_versions`` do not grow with the number of versions."""
    statements: list[str] = []

    def count(*args: Any) -> None:
        statements.append(args[2])

    def listed() -> tuple[int, list[list[str]]]:
        statements.clear()
        event.listen(engine, "before_cursor_execute", count)
        try:
            infos = svc.list_dataset_versions(ctx, "ds")
        finally:
            event.remove(engine, "before_cursor_execute", count)
        return len(statements), [i.version_tags for i in infos]

    for version in ("1.0.0", "1.1.0"):
        svc.register_dataset(ctx, _dataset(version))
    svc.set_dataset_version_tags(ctx, "ds", "1.0.0", ["baseline"])
    two, tags = listed()
    assert tags == [[], ["baseline"]]
    for version in ("1.2.0", "1.3.0", "1.4.0"):
        svc.register_dataset(ctx, _dataset(version))
    svc.set_dataset_version_tags(ctx, "ds", "1.4.0", ["candidate", "prod"])
    five, tags = listed()
    assert tags == [["candidate", "prod"], [], [], [], ["baseline"]]
    assert five == two


def test_a_prerelease_is_latest_only_while_no_release_exists(ctx: Context) -> None:
    svc.register_dataset(ctx, _dataset("1.1.0-rc.1"))
    assert svc.get_dataset(ctx, "ds").version.version == "1.1.0-rc.1"
    svc.register_dataset(ctx, _dataset("1.0.0"))
    assert svc.get_dataset(ctx, "ds").version.version == "1.0.0"
    assert _versions(ctx) == ["1.1.0-rc.1", "1.0.0"]
    svc.register_dataset(ctx, _dataset("1.1.0"))
    assert svc.get_dataset(ctx, "ds").version.version == "1.1.0"
    assert _versions(ctx) == ["1.1.0", "1.1.0-rc.1", "1.0.0"]


# --- version tags ---------------------------------------------------------------------------


def test_a_tag_reads_its_version_and_moves_when_set_on_another(ctx: Context) -> None:
    svc.register_dataset(ctx, _dataset("1.0.0"))
    svc.register_dataset(ctx, _dataset("1.1.0", cases=[_case("a", expected="five")]))
    svc.set_dataset_version_tags(ctx, "ds", "1.0.0", [" prod ", "baseline", "prod"])
    assert svc.get_dataset(ctx, "ds", "prod").version.version == "1.0.0"
    assert svc.get_dataset(ctx, "ds", "1.0.0").version.version_tags == ["baseline", "prod"]
    svc.set_dataset_version_tags(ctx, "ds", "1.1.0", ["prod"])
    assert svc.get_dataset(ctx, "ds", "prod").version.version == "1.1.0"
    assert svc.get_dataset(ctx, "ds", "1.0.0").version.version_tags == ["baseline"]
    assert svc.diff_datasets(ctx, "ds", "baseline", "prod").summary.changed == 1
    assert _count(ctx.engine, version_tags) == 2


def test_tags_never_change_the_content_hash(ctx: Context) -> None:
    result = svc.register_dataset(ctx, _dataset())
    info = svc.set_dataset_version_tags(ctx, "ds", "1.0.0", ["prod"])
    assert info.content_hash == result.content_hash
    assert svc.register_dataset(ctx, _dataset()).created is False


def test_setting_an_empty_tag_list_clears_the_tags(ctx: Context) -> None:
    svc.register_dataset(ctx, _dataset())
    svc.set_dataset_version_tags(ctx, "ds", "1.0.0", ["prod"])
    assert svc.set_dataset_version_tags(ctx, "ds", "1.0.0", []).version_tags == []
    with pytest.raises(NotFound):
        svc.get_dataset(ctx, "ds", "prod")


@pytest.mark.parametrize(
    "tags",
    [["latest"], ["1.0.0"], ["2.1.0-rc.1"], ["x" * 61], [""], ["  "], [f"t{i}" for i in range(21)]],
)
def test_a_bad_tag_is_rejected_and_nothing_is_tagged(ctx: Context, tags: list[str]) -> None:
    svc.register_dataset(ctx, _dataset())
    svc.set_dataset_version_tags(ctx, "ds", "1.0.0", ["keep"])
    with pytest.raises(InvalidInput):
        svc.set_dataset_version_tags(ctx, "ds", "1.0.0", tags)
    assert svc.get_dataset(ctx, "ds", "1.0.0").version.version_tags == ["keep"]


@pytest.mark.parametrize("ref", ["latest", "prod"])
def test_a_tag_write_needs_an_exact_version(ctx: Context, ref: str) -> None:
    svc.register_dataset(ctx, _dataset())
    svc.set_dataset_version_tags(ctx, "ds", "1.0.0", ["prod"])
    with pytest.raises(NotFound, match="needs an exact SemVer version"):
        svc.set_dataset_version_tags(ctx, "ds", ref, ["other"])


# --- the _shared tier -----------------------------------------------------------------------


def test_a_shared_dataset_is_visible_to_every_workspace(ctx: Context) -> None:
    svc.register_dataset(ctx, _dataset(), shared=True)
    carol = _as(ctx, "carol", workspace="team-b", role="viewer")
    for reader in (ctx, carol):
        page = svc.list_datasets(reader)
        assert [(s.id, s.workspace, s.shared) for s in page.items] == [("ds", "_shared", True)]
        assert svc.get_dataset(reader, "ds").version.workspace == "_shared"
        assert _versions(reader) == ["1.0.0"]


def test_an_own_version_shadows_the_shared_ones_until_it_is_deleted(ctx: Context) -> None:
    svc.register_dataset(ctx, _dataset("1.0.0"), shared=True)
    svc.register_dataset(ctx, _dataset("2.0.0"), shared=True)
    svc.register_dataset(ctx, _dataset("0.1.0", cases=[_case("own")]))
    carol = _as(ctx, "carol", workspace="team-b", role="viewer")
    assert _listed(ctx) == [("ds", "default", "0.1.0")]
    assert _versions(ctx) == ["0.1.0"]
    assert svc.get_dataset(ctx, "ds").version.workspace == "default"
    with pytest.raises(NotFound):
        svc.get_dataset(ctx, "ds", "2.0.0")
    assert _listed(carol) == [("ds", "_shared", "2.0.0")]
    svc.delete_dataset_versions(ctx, "ds")
    assert _listed(ctx) == [("ds", "_shared", "2.0.0")]
    assert _versions(ctx) == ["2.0.0", "1.0.0"]
    assert svc.get_dataset(ctx, "ds", "1.0.0").version.workspace == "_shared"


def test_list_filters_own_and_shared_ids(ctx: Context) -> None:
    svc.register_dataset(ctx, _dataset(), shared=True)
    svc.register_dataset(ctx, Dataset.model_validate({"id": "mine", "version": "1.0.0"}))
    assert [s.id for s in svc.list_datasets(ctx, owner="own").items] == ["mine"]
    assert [s.id for s in svc.list_datasets(ctx, owner="shared").items] == ["ds"]


def test_a_tenant_cannot_delete_or_tag_a_shared_version(ctx: Context) -> None:
    svc.register_dataset(ctx, _dataset(), shared=True)
    member = _as(ctx, "dave", workspace="team-b", role="admin")
    for tenant in (ctx, member):
        with pytest.raises(NotFound):
            svc.delete_dataset_version(tenant, "ds", "1.0.0")
        with pytest.raises(NotFound):
            svc.delete_dataset_versions(tenant, "ds")
        with pytest.raises(NotFound):
            svc.set_dataset_version_tags(tenant, "ds", "1.0.0", ["prod"])
    assert _versions(member) == ["1.0.0"]
    assert _count(ctx.engine, version_tags) == 0


def test_only_installation_admins_may_publish_into_shared(ctx: Context) -> None:
    with pytest.raises(Forbidden):
        svc.register_dataset(_as(ctx, "alice", role="admin"), _dataset(), shared=True)
    assert _count(ctx.engine, dataset_versions) == 0


# --- case pages and export ------------------------------------------------------------------


def test_keyset_pages_return_every_case_exactly_once_in_order(ctx: Context) -> None:
    cases = [_case(f"case-{i:04d}", task=f"task {i}") for i in range(1050)]
    svc.register_dataset(ctx, _dataset(cases=cases))
    seen: list[str] = []
    after: int | None = None
    pages = 0
    while True:
        view = svc.get_dataset(ctx, "ds", "1.0.0", after=after, limit=100)
        seen.extend(c.id for c in view.cases)
        pages += 1
        if view.next_after is None:
            break
        after = view.next_after
    assert seen == [c["id"] for c in cases]
    assert pages == 11
    assert svc.get_dataset(ctx, "ds", limit=5000).cases.__len__() == 1000


def test_a_page_of_large_cases_is_bounded_in_bytes_and_pages_on(ctx: Context) -> None:
    big = "x" * 300_000
    cases = [_case(f"case-{i}", task=big) for i in range(10)]
    svc.register_dataset(ctx, _dataset(cases=cases))
    small = replace(ctx, settings=ctx.settings.model_copy(update={"max_page_bytes": 1_000_000}))
    seen: list[str] = []
    after: int | None = None
    while True:
        view = svc.get_dataset(small, "ds", "1.0.0", after=after, limit=1000)
        assert 1 <= len(view.cases) <= 4  # 300 KB each: at most ~1 MB a page, never empty
        seen.extend(c.id for c in view.cases)
        if view.next_after is None:
            break
        after = view.next_after
    assert seen == [c["id"] for c in cases]
    huge = replace(ctx, settings=ctx.settings.model_copy(update={"max_page_bytes": 10}))
    assert len(svc.get_dataset(huge, "ds", "1.0.0").cases) == 1  # one case even above the bound


def test_an_export_is_the_registered_cases_as_jsonl(ctx: Context) -> None:
    dataset = _dataset(
        cases=[
            _case("a", expected="4", metadata={"z": 1, "a": [1, 2]}),
            _case("b", env={"kind": "browser", "start_url": "https://example.org"}),
            _case("c", task="multi\nline ünïcode"),
        ]
    )
    svc.register_dataset(ctx, dataset)
    data = b"".join(svc.export_dataset(ctx, "ds"))
    lines = data.split(b"\n")
    assert lines[-1] == b""
    exported = [Case.model_validate_json(line) for line in lines[:-1]]
    assert exported == dataset.cases
    assert lines[:-1] == [case_body(c) for c in dataset.cases]


# --- diff -----------------------------------------------------------------------------------


def test_a_diff_counts_cases_and_names_every_changed_field(ctx: Context) -> None:
    svc.register_dataset(
        ctx,
        _dataset(
            "1.0.0",
            cases=[
                _case("same", metadata={"x": 1, "y": 2}),
                _case("edited", expected="1", metadata={"level": 1, "src": "a"}),
                _case("dropped", task="old task"),
            ],
            description="v1",
            tags=["math"],
        ),
    )
    svc.register_dataset(
        ctx,
        _dataset(
            "1.1.0",
            cases=[
                _case("edited", expected="2", metadata={"src": "a", "level": 2}),
                _case("same", metadata={"y": 2, "x": 1}),
                _case("added", task="new task"),
            ],
            description="v2",
            tags=["math", "qa"],
            produced_by={"via": "spec", "id": "ds"},
        ),
    )
    diff = svc.diff_datasets(ctx, "ds", "1.0.0", "latest")
    assert (diff.base, diff.candidate) == ("1.0.0", "1.1.0")
    assert diff.summary.model_dump() == {"added": 1, "removed": 1, "changed": 1, "unchanged": 1}
    assert [(r.id, r.task) for r in diff.added] == [("added", "new task")]
    assert [(r.id, r.task) for r in diff.removed] == [("dropped", "old task")]
    (changed,) = diff.changed
    assert changed.id == "edited"
    assert [(f.field, f.before, f.after) for f in changed.changes] == [
        ("expected", "1", "2"),
        ("metadata.level", 1, 2),
    ]
    assert [(f.field, f.before, f.after) for f in diff.meta] == [
        ("description", "v1", "v2"),
        ("tags", ["math"], ["math", "qa"]),
        (
            "produced_by",
            None,
            dataset_meta(_dataset(produced_by={"via": "spec", "id": "ds"}))["produced_by"],
        ),
    ]


def test_a_diff_of_a_version_with_itself_is_empty(ctx: Context) -> None:
    svc.register_dataset(ctx, _dataset())
    diff = svc.diff_datasets(ctx, "ds", "1.0.0", "1.0.0")
    assert diff.summary.model_dump() == {"added": 0, "removed": 0, "changed": 0, "unchanged": 2}
    assert diff.meta == []


# --- streamed store_version: bad input stores nothing ---------------------------------------


def test_duplicate_case_ids_in_a_stream_are_rejected_listing_rows_and_nothing_is_stored(
    ctx: Context,
) -> None:
    svc.register_dataset(ctx, Dataset.model_validate({"id": "other", "version": "1.0.0"}))
    before = _counts(ctx.engine)
    cases = [_case("a"), _case("b", task="x"), _case("a", task="y"), _case("c"), _case("b")]
    meta = dataset_meta(Dataset.model_validate({"id": "ds", "version": "1.0.0"}))
    with pytest.raises(InvalidInput) as err:
        svc.store_version(ctx, "ds", "1.0.0", meta, _rows(cases))
    assert "'a' at rows 1, 3" in err.value.message
    assert "'b' at rows 2, 5" in err.value.message
    assert [e["rows"] for e in err.value.details["errors"]] == [[1, 3], [2, 5]]
    assert _counts(ctx.engine) == before
    assert [s.id for s in svc.list_datasets(ctx).items] == ["other"]


@pytest.mark.parametrize("version", ["1.0", "v1.0.0", "latest", "1.0.0-" + "a" * 200])
def test_a_version_that_is_not_semver_is_rejected_and_nothing_is_stored(
    ctx: Context, version: str
) -> None:
    meta = {"id": "ds", "version": version, "description": None, "tags": [], "produced_by": None}
    with pytest.raises(InvalidInput) as err:
        svc.store_version(ctx, "ds", version, meta, _rows([_case("a")]))
    assert err.value.details["errors"][0]["path"] == "version"
    assert _counts(ctx.engine) == dict.fromkeys(_counts(ctx.engine), 0)


@pytest.mark.parametrize("dataset_id", ["a/b", "", "x" * 129, "-x", "bad\n"])
def test_a_streamed_dataset_id_outside_the_pattern_is_rejected(
    ctx: Context, dataset_id: str
) -> None:
    meta = {"id": dataset_id, "version": "1.0.0", "description": None, "tags": []}
    with pytest.raises(InvalidInput) as err:
        svc.store_version(ctx, dataset_id, "1.0.0", meta, _rows([_case("a")]))
    assert err.value.details["errors"][0]["path"] == "id"
    assert _count(ctx.engine, dataset_versions) == 0


def test_a_viewer_cannot_store_a_version(ctx: Context) -> None:
    viewer = _as(ctx, "vic", role="viewer")
    meta = dataset_meta(_dataset())
    with pytest.raises(Forbidden):
        svc.store_version(viewer, "ds", "1.0.0", meta, _rows([_case("a")]))
    with pytest.raises(Forbidden):
        svc.register_dataset(viewer, _dataset())
    assert _count(ctx.engine, dataset_versions) == 0


def test_a_streamed_version_hashes_like_the_same_registered_dataset(ctx: Context) -> None:
    dataset = _dataset()
    streamed = svc.store_version(
        ctx, "ds", "1.0.0", dataset_meta(dataset), _rows([_case("a", expected="4"), _case("b")])
    )
    assert streamed.created
    assert svc.register_dataset(ctx, dataset).created is False


def test_stored_metadata_round_trips_through_get(ctx: Context) -> None:
    produced_by = {
        "via": "catalog",
        "id": "gsm8k",
        "version": "1.0.0",
        "origin": {"paper": "https://arxiv.org/abs/2110.14168"},
        "source": {"kind": "file", "file": "test.jsonl", "sha256": "ab" * 32},
    }
    svc.register_dataset(ctx, _dataset(description="d", tags=["x"], produced_by=produced_by))
    info = svc.get_dataset(ctx, "ds").version
    assert (info.description, info.tags, info.created_by) == ("d", ["x"], "local-admin")
    assert info.produced_by is not None
    assert orjson.loads(info.produced_by.model_dump_json(exclude_none=True)) == produced_by


def test_text_with_nul_or_control_characters_is_refused_alike_on_every_backend(
    ctx: Context,
) -> None:
    # PostgreSQL cannot store NUL in text columns; SQLite can. Both must answer InvalidInput.
    svc.register_dataset(ctx, _dataset())
    with pytest.raises(InvalidInput):
        svc.set_dataset_version_tags(ctx, "ds", "1.0.0", ["nul\x00tag"])
    with pytest.raises(InvalidInput):
        svc.parse_dataset({"id": "x", "version": "1.0.0", "description": "a\x00b"})
    with pytest.raises(InvalidInput):
        svc.parse_dataset({"id": "x", "version": "1.0.0", "cases": [_case("a\x00")]})
    assert _versions(ctx) == ["1.0.0"]
    assert svc.get_dataset(ctx, "ds").version.version_tags == []


def test_a_task_with_a_nul_character_round_trips(ctx: Context) -> None:
    # Inside the canonical JSON body NUL is escaped as \u0000, so PostgreSQL stores it.
    svc.register_dataset(ctx, _dataset(cases=[_case("a", task="before\x00after")]))
    assert svc.get_dataset(ctx, "ds").cases[0].task == "before\x00after"


def test_list_pages_with_limit_and_offset_and_a_negative_offset_is_invalid_input(
    ctx: Context,
) -> None:
    for name in ("c", "a", "b"):
        svc.register_dataset(ctx, Dataset.model_validate({"id": name, "version": "1.0.0"}))
    assert [s.id for s in svc.list_datasets(ctx, limit=2).items] == ["a", "b"]
    assert [s.id for s in svc.list_datasets(ctx, limit=2, offset=2).items] == ["c"]
    with pytest.raises(InvalidInput) as raised:  # issue 9: out of range names the parameter
        svc.list_datasets(ctx, limit=2, offset=-1)
    assert raised.value.details["errors"][0]["path"] == "offset"


def test_list_search_matches_id_description_and_tags(ctx: Context) -> None:
    svc.register_dataset(ctx, _dataset(description="Grade school MATH"))
    svc.register_dataset(
        ctx, Dataset.model_validate({"id": "web", "version": "1.0.0", "tags": ["Browser"]})
    )
    assert [s.id for s in svc.list_datasets(ctx, search="math").items] == ["ds"]
    assert [s.id for s in svc.list_datasets(ctx, search="browser").items] == ["web"]
    assert [s.id for s in svc.list_datasets(ctx, search="WE").items] == ["web"]


def test_a_tag_on_a_deleted_version_resolves_again_once_it_is_revived(ctx: Context) -> None:
    svc.register_dataset(ctx, _dataset("1.0.0"))
    svc.register_dataset(ctx, _dataset("1.1.0"))
    svc.set_dataset_version_tags(ctx, "ds", "1.0.0", ["baseline"])
    svc.delete_dataset_version(ctx, "ds", "1.0.0")
    with pytest.raises(NotFound):
        svc.get_dataset(ctx, "ds", "baseline")
    svc.register_dataset(ctx, _dataset("1.0.0"))
    assert svc.get_dataset(ctx, "ds", "baseline").version.version == "1.0.0"


def _register_while_another_is_mid_write(ctx: Context, other: Dataset) -> dict[str, object]:
    """Register ``other`` while a streamed register of ``_dataset()`` holds its header row.

    Returns ``{"first": result or error, "second": result or error}``.
    """
    holding, release = threading.Event(), threading.Event()
    out: dict[str, object] = {}

    def held_rows() -> Iterator[tuple[str, bytes, str]]:
        for i, row in enumerate(_rows([_case("a", expected="4"), _case("b")])):
            if i == 1:
                holding.set()
                release.wait(10)
            yield row

    def run(key: str, call: Any) -> None:
        try:
            out[key] = call()
        except Exception as exc:
            out[key] = exc

    meta = dataset_meta(_dataset())
    first = threading.Thread(
        target=run, args=("first", lambda: svc.store_version(ctx, "ds", "1.0.0", meta, held_rows()))
    )
    first.start()
    assert holding.wait(10)
    second = threading.Thread(target=run, args=("second", lambda: svc.register_dataset(ctx, other)))
    second.start()
    second.join(0.5)  # the second register now waits on the first one's uncommitted row
    release.set()
    first.join(10)
    second.join(30)
    return out


def test_two_concurrent_identical_registers_both_succeed_and_store_one_version(
    ctx: Context,
) -> None:
    out = _register_while_another_is_mid_write(ctx, _dataset())
    first, second = out["first"], out["second"]
    assert isinstance(first, RegisterResult) and first.created
    assert isinstance(second, RegisterResult) and not second.created
    assert second.content_hash == first.content_hash
    assert _counts(ctx.engine)["dataset_versions"] == 1


def test_a_concurrent_register_with_other_content_is_a_conflict_naming_the_version(
    ctx: Context,
) -> None:
    out = _register_while_another_is_mid_write(ctx, _dataset(cases=[_case("z")]))
    assert isinstance(out["first"], RegisterResult)
    assert isinstance(out["second"], Conflict)
    assert "ds@1.0.0" in out["second"].message
    assert [c.id for c in svc.get_dataset(ctx, "ds").cases] == ["a", "b"]


def test_one_case_is_read_by_its_id(ctx: Context) -> None:
    svc.register_dataset(ctx, _dataset(cases=[_case("owner/repo#1 spaced", expected="x")]))
    assert svc.get_case(ctx, "ds", "latest", "owner/repo#1 spaced").expected == "x"
    with pytest.raises(NotFound, match="'missing'"):
        svc.get_case(ctx, "ds", "1.0.0", "missing")


def test_a_javascript_origin_link_is_invalid_input_naming_the_path(ctx: Context) -> None:
    payload = {
        "id": "ds",
        "version": "1.0.0",
        "produced_by": {"via": "spec", "id": "ds", "origin": {"paper": "javascript:alert(1)"}},
    }
    with pytest.raises(InvalidInput) as err:
        svc.parse_dataset(payload)
    assert err.value.details["errors"][0]["path"] == "produced_by.origin.paper"
    report = svc.validate_dataset(ctx, payload)
    assert not report.ok and report.errors[0].path == "produced_by.origin.paper"
    assert _counts(ctx.engine) == dict.fromkeys(_counts(ctx.engine), 0)
