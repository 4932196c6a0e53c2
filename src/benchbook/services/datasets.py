"""Dataset operations (SPEC B, D): register, validate, list, get, versions, diff, delete,
tags, activity. Every function starts with ``ctx.require``.

Storing a version is :mod:`benchbook.services.version_storage`, reading and exporting its cases
:mod:`benchbook.services.dataset_cases`; their operations are re-exported here.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError
from sqlalchemy import Connection

from benchbook.contracts import Case, Dataset, DatasetDiff, Provenance
from benchbook.contracts.registry import (
    ActivityPage,
    DatasetPage,
    DatasetSummary,
    DatasetView,
    DeleteResult,
    RegisterResult,
    ValidationIssue,
    ValidationReport,
    VersionInfo,
)
from benchbook.datasets.diff import diff_versions
from benchbook.datasets.identity import dataset_meta, version_hash
from benchbook.datasets.versions import clean_version_tags, pick_latest, sort_versions
from benchbook.errors import Forbidden, InvalidInput, NotFound
from benchbook.services.activity import resource_timeline
from benchbook.services.bounds import bounded_int, bounded_search
from benchbook.services.context import Context
from benchbook.services.controls import may_delete_created_by
from benchbook.services.dataset_cases import MAX_AFTER as MAX_AFTER
from benchbook.services.dataset_cases import export_dataset as export_dataset
from benchbook.services.dataset_cases import export_dataset_chunks as export_dataset_chunks
from benchbook.services.dataset_cases import get_case as get_case
from benchbook.services.dataset_cases import get_case_neighbours as get_case_neighbours
from benchbook.services.dataset_cases import search_cases as search_cases
from benchbook.services.resolve import own_live_version, resolve_owner, resolve_version
from benchbook.services.validation import issues_of, parse_model
from benchbook.services.version_storage import (
    case_rows,
    content_difference,
    dataset_event,
    stored_meta,
)
from benchbook.services.version_storage import store_version as store_version
from benchbook.store import case_reads, version_tags
from benchbook.store import dataset_owners as heads
from benchbook.store import datasets as repo

OwnerFilter = Literal["all", "own", "shared"]
SortKey = Literal["name", "updated", "cases"]
MAX_PAGE = 1000
_CASES = TypeAdapter(list[Case])


def register_dataset(ctx: Context, dataset: Dataset, shared: bool = False) -> RegisterResult:
    """Register a dataset version (immutable).

    Identical content again is a no-op (``created`` False); identical content on a tombstoned
    version revives it keeping its creator; different content raises Conflict naming id@version.
    ``shared`` publishes into ``_shared`` (installation admins only).
    """
    ctx.require("datasets:write")
    return store_version(
        ctx, dataset.id, dataset.version, dataset_meta(dataset), case_rows(dataset.cases), shared
    )


def validate_dataset(
    ctx: Context, payload: dict[str, Any], shared: bool = False
) -> ValidationReport:
    """Dry-run a register: schema errors by path, existing versions, whether it would conflict.

    Writes nothing. Returns ``ok`` False with ``errors`` when the body is invalid.
    """
    ctx.require("datasets:write")
    try:
        dataset = Dataset.model_validate(payload)
    except ValidationError as exc:
        return ValidationReport(ok=False, errors=[ValidationIssue(**i) for i in issues_of(exc)])
    workspace = ctx.target_workspace(shared)
    with ctx.engine.connect() as conn:
        live = repo.live_versions(conn, workspace, dataset.id)
        existing = repo.find_version(conn, workspace, dataset.id, dataset.version)
        report = ValidationReport(
            ok=True,
            existing_versions=sort_versions(v.version for v in live),
            cases=len(dataset.cases),
        )
        if existing is None:
            return report
        meta = dataset_meta(dataset)
        incoming = sorted((cid, h) for cid, _, h in case_rows(dataset.cases))
        same = version_hash(meta, incoming) == existing.content_hash
        report.version_exists = True
        report.identical = same
        report.would_conflict = not same
        if not same:
            said, _ = content_difference(conn, existing, meta, incoming)
            report.ok = False
            report.errors.append(
                ValidationIssue(
                    path="version",
                    message=f"{dataset.id}@{dataset.version} exists with different content: {said}",
                )
            )
    return report


def list_datasets(
    ctx: Context,
    search: str | None = None,
    owner: OwnerFilter = "all",
    sort: SortKey = "name",
    limit: int = 50,
    offset: int = 0,
) -> DatasetPage:
    """Datasets visible to the caller: own ids plus ``_shared`` ids not shadowed by own ones
    (the owner-first rule of ``store.dataset_owners``), one row per id from its latest version.

    ``search`` matches id, description, the dataset's tags, its version tags and the tags of
    the latest version's cases (case-insensitive substring). ``sort`` is ``name``
    (ascending), ``updated`` or ``cases`` (both descending). Each item's ``version_tags``
    maps a version tag to the version it names. ``limit`` is clamped to 1-1000; ``offset``
    must be 0…2⁶³-1 (InvalidInput, path ``offset``); ``search`` at most 512 characters
    (InvalidInput, path ``search``). One SQL statement per page (~25 ms of
    CPU on SQLite for 10,000 ids × 3 versions, ``bench/datasets_list.py``); totals cover the
    whole filtered listing.
    """
    ctx.require("datasets:read")
    limit, offset = max(1, min(limit, MAX_PAGE)), bounded_int(offset, "offset")
    bounded_search(search, "search")
    with ctx.engine.connect() as conn:
        page = heads.list_heads(
            conn, ctx.workspace, search=search, owner=owner, sort=sort, limit=limit, offset=offset
        )
    return DatasetPage(
        items=[
            DatasetSummary(
                workspace=h.latest.workspace,
                id=h.latest.dataset_id,
                shared=h.latest.workspace != ctx.workspace,
                latest=h.latest.version,
                versions=h.versions,
                cases=h.latest.case_count,
                description=h.latest.description,
                tags=h.latest.tags,
                version_tags=h.version_tags,
                created_by=h.latest.created_by,
                updated_at=h.updated_at,
            )
            for h in page.items
        ],
        total=page.total,
        total_cases=page.total_cases,
        total_versions=page.total_versions,
        limit=limit,
        offset=offset,
    )


def _info(
    conn: Connection,
    row: repo.VersionRow,
    latest: str | None = None,
    tags_by_pk: dict[int, list[str]] | None = None,
) -> VersionInfo:
    """``row`` as a VersionInfo; ``tags_by_pk`` (the dataset's :func:`version_tags.tags_by_version`,
    read once for a listing) saves the tag query."""
    if tags_by_pk is None:
        tags_by_pk = version_tags.tags_by_version(conn, row.workspace, row.dataset_id)
    tags = tags_by_pk.get(row.pk, [])
    return VersionInfo(
        workspace=row.workspace,
        id=row.dataset_id,
        version=row.version,
        description=row.description,
        tags=row.tags,
        version_tags=tags,
        produced_by=Provenance.model_validate(row.produced_by) if row.produced_by else None,
        cases=row.case_count,
        content_hash=row.content_hash,
        created_by=row.created_by,
        created_at=row.created_at,
        is_latest=row.version == latest,
    )


def get_dataset(
    ctx: Context, dataset_id: str, ref: str = "latest", after: int | None = None, limit: int = 50
) -> DatasetView:
    """A version (SemVer, ``latest`` or tag) with one keyset page of cases.

    ``after`` is the cursor from the previous page's ``next_after``; ``limit`` ≤ 1000, and a
    page also stops before its case bodies pass ``settings.max_page_bytes`` characters (16 MiB;
    always at least one case), so one reader cannot make the server build gigabytes.
    Raises NotFound when the id or version is not visible, InvalidInput (path ``after``) for a
    negative cursor or one beyond 64 bits.
    """
    ctx.require("datasets:read")
    limit = max(1, min(limit, MAX_PAGE))
    if after is not None:
        bounded_int(after, "after", high=MAX_AFTER)
    with ctx.engine.connect() as conn:
        row = resolve_version(conn, ctx.workspace, dataset_id, ref)
        fitting = case_reads.cases_fitting(conn, row.pk, after, limit, ctx.settings.max_page_bytes)
        page = case_reads.case_page(conn, row.pk, after, fitting)
        latest = pick_latest(v.version for v in repo.live_versions(conn, row.workspace, dataset_id))
        info = _info(conn, row, latest)
    more = bool(page) and page[-1][0] < row.case_count - 1  # positions are dense 0…n-1
    cases = _CASES.validate_json(b"[" + b",".join(body for _, _, body in page) + b"]")
    return DatasetView(version=info, cases=cases, next_after=page[-1][0] if more else None)


def list_dataset_versions(ctx: Context, dataset_id: str) -> list[VersionInfo]:
    """Live versions of the resolved owner, newest (highest SemVer) first."""
    ctx.require("datasets:read")
    with ctx.engine.connect() as conn:
        owner = resolve_owner(conn, ctx.workspace, dataset_id)
        live = repo.live_versions(conn, owner, dataset_id)
        latest = pick_latest(v.version for v in live)
        tags = version_tags.tags_by_version(conn, owner, dataset_id)
        infos = [_info(conn, v, latest, tags) for v in live]
    order = {v: i for i, v in enumerate(sort_versions(i.version for i in infos))}
    return sorted(infos, key=lambda i: order[i.version], reverse=True)


def diff_datasets(
    ctx: Context, dataset_id: str, base: str, candidate: str = "latest"
) -> DatasetDiff:
    """Diff two versions (SemVer, ``latest`` or tags) of one dataset. Raises NotFound."""
    ctx.require("datasets:read")
    with ctx.engine.connect() as conn:
        b = resolve_version(conn, ctx.workspace, dataset_id, base)
        c = resolve_version(conn, ctx.workspace, dataset_id, candidate)

        b_idx, c_idx, unchanged = repo.diff_index(conn, b.pk, c.pk)
        return diff_versions(
            dataset_id,
            (b.version, stored_meta(b), b_idx),
            (c.version, stored_meta(c), c_idx),
            lambda body_ids: repo.bodies_for(conn, body_ids),
            unchanged=unchanged,
        )


def _authorize_delete(ctx: Context, row: repo.VersionRow) -> None:
    """Creator override, else ``datasets:delete`` (after ``datasets:write`` was required)."""
    if may_delete_created_by(ctx, row.created_by):
        return
    raise Forbidden(
        f"only the creator or an admin may delete {row.dataset_id}@{row.version}",
        {"id": row.dataset_id, "version": row.version},
    )


def delete_dataset_version(ctx: Context, dataset_id: str, version: str) -> DeleteResult:
    """Tombstone one exact version of the caller's own workspace (no ``latest``, no tags)."""
    return delete_dataset_versions(ctx, dataset_id, [version])


def delete_dataset_versions(
    ctx: Context, dataset_id: str, versions: list[str] | None = None
) -> DeleteResult:
    """Tombstone several versions, all or nothing; ``None`` means every own live version.

    Every target is loaded and authorized before anything is written; one missing target
    raises NotFound and one forbidden target raises Forbidden, deleting nothing. Viewers are
    read-only: the creator override needs ``datasets:write`` (a creator later demoted to viewer
    can no longer delete), and ``datasets:delete`` covers every version of the workspace.
    """
    ctx.require("datasets:write")
    with ctx.engine.begin() as conn:
        if versions is None:
            targets = repo.live_versions(conn, ctx.workspace, dataset_id)
            if not targets:
                raise NotFound(f"dataset {dataset_id!r} not found", {"id": dataset_id})
        else:
            if not versions:
                raise InvalidInput("versions may not be an empty list; omit it to delete all")
            targets = [
                own_live_version(conn, ctx.workspace, dataset_id, v)
                for v in dict.fromkeys(versions)
            ]
        for row in targets:
            _authorize_delete(ctx, row)
        repo.set_deleted(conn, [r.pk for r in targets], ctx.principal.user_id)
        for r in targets:
            dataset_event(
                conn, ctx.workspace, dataset_id, "deleted", ctx.principal.user_id, r.version
            )
    return DeleteResult(
        workspace=ctx.workspace, id=dataset_id, deleted=sort_versions(r.version for r in targets)
    )


def set_dataset_version_tags(
    ctx: Context, dataset_id: str, version: str, tags: list[str]
) -> VersionInfo:
    """Replace a version's tags; a tag held by a sibling version moves here.

    Needs an exact own version; tag rules of SPEC B (≤ 60 chars, ≤ 20, not ``latest``, not SemVer).
    """
    ctx.require("datasets:write")
    cleaned = clean_version_tags(tags)
    with ctx.engine.begin() as conn:
        row = own_live_version(conn, ctx.workspace, dataset_id, version)
        version_tags.replace_tags(
            conn, ctx.workspace, dataset_id, row.pk, cleaned, ctx.principal.user_id
        )
        dataset_event(
            conn, ctx.workspace, dataset_id, "tagged", ctx.principal.user_id, version, tags=cleaned
        )
        latest = pick_latest(v.version for v in repo.live_versions(conn, ctx.workspace, dataset_id))
        return _info(conn, row, latest)


def get_dataset_activity(
    ctx: Context, dataset_id: str, before: int | None = None, limit: int = 50
) -> ActivityPage:
    """The dataset's timeline, newest first: registered, deleted, revived and tagged events of
    the owner merged with the caller's workspace's comments, and runs (``kind: "run"`` with
    ``run_id``, ``harness``, ``version`` and the run's current ``status``, ``pass_rate``,
    ``done``/``total``); ``before`` takes ``next_before`` (InvalidInput, path ``before``, when
    negative or beyond 64 bits; NotFound when no item of this timeline has it).
    """
    ctx.require("datasets:read")
    limit = max(1, min(limit, MAX_PAGE))
    if before is not None:
        bounded_int(before, "before")
    with ctx.engine.connect() as conn:
        owner = resolve_owner(conn, ctx.workspace, dataset_id)
        page = resource_timeline(
            conn,
            owner=owner,
            workspace=ctx.workspace,
            resource_type="dataset",
            resource_id=dataset_id,
            before=before,
            limit=limit,
        )
        # Run views (contracts.run, the scorecards) load only for a timeline that shows a
        # run: every data command imports this module (`datasets list` start-up, bench.startup).
        from benchbook.services.run_views import with_run_status

        for item in page.items:
            if item.kind == "run" and ctx.allows("runs:read"):
                item.details = with_run_status(conn, ctx.workspace, item.details)
        return page


def parse_dataset(payload: Any) -> Dataset:
    """Validate a dataset body; InvalidInput lists every problem by path."""
    return parse_model(Dataset, payload, "dataset")
