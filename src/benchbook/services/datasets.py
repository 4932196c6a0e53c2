"""Dataset operations (SPEC B, D): register, validate, list, get, export, versions, diff,
delete, tags, activity. Every function starts with ``ctx.require``.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Generator, Iterable, Iterator, Sequence
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError
from sqlalchemy import Connection
from sqlalchemy.exc import IntegrityError

from benchbook.contracts import Case, Dataset, DatasetDiff, Provenance
from benchbook.contracts.common import RESOURCE_ID_RE
from benchbook.contracts.dataset import CaseMatch, CaseNeighbours
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
from benchbook.datasets.diff import (
    changed_meta_fields,
    count_case_differences,
    describe_difference,
    diff_versions,
)
from benchbook.datasets.identity import (
    VersionHasher,
    case_body,
    dataset_meta,
    sha256_hex,
    version_hash,
)
from benchbook.datasets.versions import (
    clean_version_tags,
    parse_version,
    pick_latest,
    sort_versions,
)
from benchbook.errors import Conflict, Forbidden, InvalidInput, NotFound
from benchbook.services.activity import resource_timeline
from benchbook.services.bounds import bounded_int
from benchbook.services.context import Context
from benchbook.services.controls import may_delete_created_by
from benchbook.services.resolve import own_live_version, resolve_owner, resolve_version
from benchbook.services.validation import issues_of, parse_model
from benchbook.store import dataset_owners as heads
from benchbook.store import datasets as repo
from benchbook.store.events import add_event

OwnerFilter = Literal["all", "own", "shared"]
#: The source's number of each stored case, by position, and what it counts (``line``, ``row``).
RowNumbers = tuple[Sequence[int], str]
SortKey = Literal["name", "updated", "cases"]
MAX_PAGE = 1000
_CASES = TypeAdapter(list[Case])


MAX_AFTER = 2**62
"""Largest case cursor ``after`` (far beyond any case count; a power of two, so the OpenAPI
document, whose numbers are floats, states it exactly)."""


def case_rows(cases: Iterable[Case]) -> Iterator[repo.CaseRow]:
    """``(id, canonical body, sha256)`` for each parsed case."""
    for case in cases:
        body = case_body(case)
        yield case.id, body, sha256_hex(body)


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


def check_dataset_id(dataset_id: str) -> None:
    """Raise InvalidInput (path ``id``) unless the id matches SPEC A's URL-safe pattern."""
    if not RESOURCE_ID_RE.fullmatch(dataset_id):
        problem = "must be 1-128 characters of [A-Za-z0-9._-], starting with a letter or digit"
        raise InvalidInput(
            f"dataset id {dataset_id[:40]!r} {problem}",
            {"errors": [{"path": "id", "message": problem}]},
        )


def store_version(
    ctx: Context,
    dataset_id: str,
    version: str,
    meta: dict[str, Any],
    rows: Iterable[repo.CaseRow],
    shared: bool = False,
    unless_same_as: str | None = None,
    row_numbers: RowNumbers | None = None,
) -> RegisterResult:
    """Store a version from a stream of case rows in one transaction (the register core).

    ``row_numbers`` (filled while ``rows`` streams: the source's number for each case, and the
    word for it, ``line`` for CSV and JSONL) lets duplicate-id errors name file lines instead of
    case positions.

    ``meta`` is the canonical metadata (``dataset_meta``). ``unless_same_as`` names an existing
    version (an import's ``bump`` passes the latest): when the new content equals it (the same
    cases matched by id and the same description, tags and produced_by), nothing is stored and
    the result describes that version (``created`` False). Raises Conflict on different content,
    InvalidInput when the id or version is malformed or case ids repeat (listing 1-based rows),
    Forbidden without ``datasets:write``. Nothing is stored on error.
    """
    ctx.require("datasets:write")
    check_dataset_id(dataset_id)
    workspace = ctx.target_workspace(shared)
    parse_version(version)
    args = (ctx, workspace, dataset_id, version, meta, rows, unless_same_as, row_numbers)
    try:
        return _store_in_transaction(*args)
    except _LostRace:
        # A concurrent register of the same key committed first. Its header insert failed before
        # any row was read, so compare with the winner: identical → no-op, different → Conflict.
        return _store_in_transaction(*args)
    except _Unchanged as same:
        return same.result


class _LostRace(Conflict):
    """The version header insert hit the unique key: another register committed it first."""


class _Unchanged(Exception):
    """The new version equals ``unless_same_as``: raised to roll its rows back."""

    def __init__(self, result: RegisterResult) -> None:
        super().__init__(result.version)
        self.result = result


def _store_in_transaction(
    ctx: Context,
    workspace: str,
    dataset_id: str,
    version: str,
    meta: dict[str, Any],
    rows: Iterable[repo.CaseRow],
    unless_same_as: str | None,
    row_numbers: RowNumbers | None,
) -> RegisterResult:
    try:
        with ctx.engine.begin() as conn:
            return _store(
                ctx, conn, workspace, dataset_id, version, meta, rows, unless_same_as, row_numbers
            )
    except IntegrityError as exc:
        raise Conflict(f"{dataset_id}@{version} was registered concurrently; retry") from exc


def _check_unchanged(
    conn: Connection, workspace: str, dataset_id: str, pk: int, meta: dict[str, Any], other: str
) -> None:
    """Raise _Unchanged when the just-written version ``pk`` has the content of ``other``."""
    row = repo.find_version(conn, workspace, dataset_id, other)
    if row is None or not row.live or changed_meta_fields(_stored_meta(row), meta):
        return
    removed_or_changed, added_or_changed, _ = repo.diff_index(conn, row.pk, pk)
    if removed_or_changed or added_or_changed:
        return
    raise _Unchanged(
        RegisterResult(
            workspace=workspace,
            id=dataset_id,
            version=row.version,
            created=False,
            cases=row.case_count,
            content_hash=row.content_hash,
        )
    )


def _store(
    ctx: Context,
    conn: Connection,
    workspace: str,
    dataset_id: str,
    version: str,
    meta: dict[str, Any],
    rows: Iterable[repo.CaseRow],
    unless_same_as: str | None = None,
    row_numbers: RowNumbers | None = None,
) -> RegisterResult:
    actor = ctx.principal.user_id
    existing = repo.find_version(conn, workspace, dataset_id, version)
    if existing is not None:
        incoming = _incoming_pairs(rows)
        if version_hash(meta, incoming) != existing.content_hash:
            raise _conflict(conn, existing, meta, incoming)
        revived = not existing.live
        if revived:
            repo.set_deleted(conn, [existing.pk], None)
            _event(conn, workspace, dataset_id, "revived", actor, version)
        return RegisterResult(
            workspace=workspace,
            id=dataset_id,
            version=version,
            created=False,
            revived=revived,
            cases=existing.case_count,
            content_hash=existing.content_hash,
        )
    try:
        pk = repo.insert_version_header(
            conn,
            workspace=workspace,
            dataset_id=dataset_id,
            version=version,
            is_prerelease=bool(parse_version(version).prerelease),
            description=meta.get("description"),
            tags=list(meta.get("tags") or []),
            produced_by=meta.get("produced_by"),
            created_by=actor,
        )
    except IntegrityError as exc:
        raise _LostRace(f"{dataset_id}@{version} was registered concurrently; retry") from exc
    count = sum(1 for _ in repo.write_cases(conn, pk, rows))
    dupes = repo.duplicate_case_ids(conn, pk)
    if dupes:
        if row_numbers is not None:
            numbers, word = row_numbers
            raise _duplicates([(cid, [numbers[p] for p in pos]) for cid, pos in dupes], word)
        raise _duplicates([(cid, [p + 1 for p in pos]) for cid, pos in dupes])
    if unless_same_as is not None:
        _check_unchanged(conn, workspace, dataset_id, pk, meta, unless_same_as)
    # Hashed in case id order straight from the stored rows: identity ignores case order.
    hasher = VersionHasher(meta)
    for pairs in repo.case_hashes_by_id(conn, pk):
        hasher.add_many([h for _, h in pairs])
    content_hash = hasher.hexdigest()
    repo.finish_version(conn, pk, content_hash, count)
    _event(conn, workspace, dataset_id, "registered", actor, version, cases=count)
    return RegisterResult(
        workspace=workspace,
        id=dataset_id,
        version=version,
        created=True,
        cases=count,
        content_hash=content_hash,
    )


def _duplicates(dupes: list[tuple[str, list[int]]], word: str | None = None) -> InvalidInput:
    """InvalidInput listing duplicate case ids with their 1-based rows, or with the source's own
    numbers when ``word`` names them (``'x' on lines 2 and 5``)."""

    def said(cid: str, numbers: list[int]) -> str:
        if word is None:
            return f"{cid!r} at rows {', '.join(map(str, numbers))}"
        head, last = ", ".join(map(str, numbers[:-1])), numbers[-1]
        return f"{cid!r} on {word}s {head} and {last}"

    listed = "; ".join(said(cid, numbers) for cid, numbers in dupes)
    errors: list[dict[str, Any]] = []
    for cid, numbers in dupes:
        error: dict[str, Any] = {"path": "cases", "message": f"duplicate id {cid!r}"}
        error["rows"] = numbers
        if word is not None:
            error[f"{word}s"] = numbers
        errors.append(error)
    return InvalidInput(f"case ids must be unique within a version: {listed}", {"errors": errors})


def _incoming_pairs(rows: Iterable[repo.CaseRow]) -> list[tuple[str, str]]:
    """``(case_id, case_hash)`` of incoming rows sorted by case id (the identity order).

    Raises InvalidInput listing duplicate ids with their 1-based rows, as a fresh register would.
    """
    indexed = sorted((cid, h, row) for row, (cid, _, h) in enumerate(rows, start=1))
    dupes: dict[str, list[int]] = {}
    for (a, _, ra), (b, _, rb) in itertools.pairwise(indexed):
        if a == b:
            dupes.setdefault(a, [ra]).append(rb)
    if dupes:
        raise _duplicates(list(dupes.items())[:20])
    return [(cid, h) for cid, h, _ in indexed]


def _stored_meta(row: repo.VersionRow) -> dict[str, Any]:
    return {"description": row.description, "tags": row.tags, "produced_by": row.produced_by}


def _difference(
    conn: Connection,
    existing: repo.VersionRow,
    meta: dict[str, Any],
    incoming: list[tuple[str, str]],
) -> tuple[str, dict[str, Any]]:
    """What differs between a stored version and incoming content: the diff's own terms."""
    cases = count_case_differences(
        (pair for pairs in repo.case_hashes_by_id(conn, existing.pk) for pair in pairs), incoming
    )
    fields = changed_meta_fields(_stored_meta(existing), meta)
    return describe_difference(cases, fields), {"cases": cases, "meta": fields}


def _conflict(
    conn: Connection,
    existing: repo.VersionRow,
    meta: dict[str, Any],
    incoming: list[tuple[str, str]],
) -> Conflict:
    """Conflict naming id@version and saying whether cases (how many) or only metadata differ."""
    said, details = _difference(conn, existing, meta, incoming)
    key = f"{existing.dataset_id}@{existing.version}"
    return Conflict(
        f"{key} already exists with different content: {said}; register a new version instead",
        {"id": existing.dataset_id, "version": existing.version, **details},
    )


def _event(
    conn: Connection, ws: str, dataset_id: str, kind: str, actor: str, version: str, **extra: Any
) -> None:
    add_event(
        conn,
        workspace=ws,
        resource_type="dataset",
        resource_id=dataset_id,
        kind=kind,
        actor=actor,
        details={"version": version, **extra},
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
            said, _ = _difference(conn, existing, meta, incoming)
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
    must be 0…2⁶³-1 (InvalidInput, path ``offset``). One SQL statement per page (~25 ms of
    CPU on SQLite for 10,000 ids × 3 versions, ``bench/datasets_list.py``); totals cover the
    whole filtered listing.
    """
    ctx.require("datasets:read")
    limit, offset = max(1, min(limit, MAX_PAGE)), bounded_int(offset, "offset")
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
    """``row`` as a VersionInfo; ``tags_by_pk`` (the dataset's :func:`repo.tags_by_version`,
    read once for a listing) saves the tag query."""
    if tags_by_pk is None:
        tags_by_pk = repo.tags_by_version(conn, row.workspace, row.dataset_id)
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
        fitting = repo.cases_fitting(conn, row.pk, after, limit, ctx.settings.max_page_bytes)
        page = repo.case_page(conn, row.pk, after, fitting)
        latest = pick_latest(v.version for v in repo.live_versions(conn, row.workspace, dataset_id))
        info = _info(conn, row, latest)
    more = bool(page) and page[-1][0] < row.case_count - 1  # positions are dense 0…n-1
    cases = _CASES.validate_json(b"[" + b",".join(body for _, _, body in page) + b"]")
    return DatasetView(version=info, cases=cases, next_after=page[-1][0] if more else None)


def get_case(ctx: Context, dataset_id: str, ref: str, case_id: str) -> Case:
    """One case of a version by its id. Raises NotFound."""
    ctx.require("datasets:read")
    with ctx.engine.connect() as conn:
        row = resolve_version(conn, ctx.workspace, dataset_id, ref)
        body = repo.case_by_id(conn, row.pk, case_id)
    if body is None:
        raise NotFound(f"case {case_id!r} not found in {dataset_id}@{row.version}")
    return Case.model_validate_json(body)


def search_cases(
    ctx: Context, dataset_id: str, ref: str, query: str, limit: int = 50
) -> list[CaseMatch]:
    """Up to ``limit`` (1-200) cases of ``dataset_id@ref`` whose id or content (task,
    expected, metadata) contains ``query``, case-insensitively, in version order, each with
    its 0-based position (a substring scan: ~0.1 s at 100k cases). Raises NotFound like
    :func:`get_dataset`, InvalidInput for an empty query or a ``limit`` out of range."""
    ctx.require("datasets:read")
    bounded_int(limit, "limit", low=1, high=200)
    needle = query.strip()
    if not needle:
        raise InvalidInput("search text is empty", {"errors": [{"path": "q", "message": "empty"}]})
    with ctx.engine.connect() as conn:
        row = resolve_version(conn, ctx.workspace, dataset_id, ref)
        found = repo.search_case_rows(conn, row.pk, needle, limit)
    return [
        CaseMatch(position=position, case=Case.model_validate_json(body))
        for position, _, body in found
    ]


def get_case_neighbours(ctx: Context, dataset_id: str, ref: str, case_id: str) -> CaseNeighbours:
    """Where ``case_id`` sits in ``dataset_id@ref``: its 0-based position and the previous and
    next case ids (None at either end), for a Previous/Next. Raises NotFound like
    :func:`get_case`."""
    ctx.require("datasets:read")
    with ctx.engine.connect() as conn:
        row = resolve_version(conn, ctx.workspace, dataset_id, ref)
        found = repo.case_neighbours(conn, row.pk, case_id)
    if found is None:
        raise NotFound(f"case {case_id!r} not found in {dataset_id}@{row.version}")
    position, previous, following = found
    return CaseNeighbours(position=position, previous=previous, next=following)


def export_dataset(ctx: Context, dataset_id: str, ref: str = "latest") -> Iterator[bytes]:
    """Stream a version's cases as JSONL: one item per case, its canonical JSON (UTF-8) plus
    ``\\n``, in version order.

    Resolution happens before the first line, so NotFound is raised eagerly. The database
    cursor stays open while the iterator is consumed; ``close()`` it to stop early.
    """
    batches = _export_batches(ctx, dataset_id, ref)

    def lines() -> Iterator[bytes]:
        with contextlib.closing(batches):
            for batch in batches:
                for body in batch:
                    yield body + b"\n"

    return lines()


def export_dataset_chunks(
    ctx: Context,
    dataset_id: str,
    ref: str = "latest",
    chunk_bytes: int = 256 * 1024,
    after: int | None = None,
) -> Iterator[bytes]:
    """The bytes of :func:`export_dataset` in chunks of whole lines, each about ``chunk_bytes``
    (sized from the average line of each database batch of 5,000 cases; a longer line is a
    chunk of its own): what a socket is fed, without a Python step per line. The stored
    canonical bodies are sent as they are (validated when written; never parsed here).

    ``after`` (0-based position, as ``get_dataset``'s cursor) starts after that case: a reader
    whose stream dropped resumes with the count of lines it has minus one. Raises NotFound
    eagerly like :func:`export_dataset`, InvalidInput (path ``after``) for a negative cursor or
    one beyond 64 bits."""
    batches = _export_batches(ctx, dataset_id, ref, after)

    def chunks() -> Iterator[bytes]:
        with contextlib.closing(batches):
            for batch in batches:
                per = max(1, len(batch) * chunk_bytes // (sum(map(len, batch)) + len(batch)))
                for start in range(0, len(batch), per):
                    part = batch[start : start + per]
                    part.append(b"")  # the last line's newline
                    yield b"\n".join(part)

    return chunks()


def _export_batches(
    ctx: Context, dataset_id: str, ref: str, after: int | None = None
) -> Generator[list[bytes]]:
    """Resolve ``dataset_id@ref`` now (NotFound, Forbidden, a bad ``after`` raised here); the
    returned generator reads the version's bodies after position ``after`` in batches on its own
    connection."""
    ctx.require("datasets:read")
    if after is not None:
        bounded_int(after, "after", high=MAX_AFTER)
    with ctx.engine.connect() as conn:
        version_pk = resolve_version(conn, ctx.workspace, dataset_id, ref).pk

    start = -1 if after is None else after

    def batches() -> Generator[list[bytes]]:
        with ctx.engine.connect() as conn:
            yield from repo.iter_body_batches(conn, version_pk, after=start)

    return batches()


def list_dataset_versions(ctx: Context, dataset_id: str) -> list[VersionInfo]:
    """Live versions of the resolved owner, newest (highest SemVer) first."""
    ctx.require("datasets:read")
    with ctx.engine.connect() as conn:
        owner = resolve_owner(conn, ctx.workspace, dataset_id)
        live = repo.live_versions(conn, owner, dataset_id)
        latest = pick_latest(v.version for v in live)
        tags = repo.tags_by_version(conn, owner, dataset_id)
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
            (b.version, _stored_meta(b), b_idx),
            (c.version, _stored_meta(c), c_idx),
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
            _event(conn, ctx.workspace, dataset_id, "deleted", ctx.principal.user_id, r.version)
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
        repo.replace_tags(conn, ctx.workspace, dataset_id, row.pk, cleaned, ctx.principal.user_id)
        _event(
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
        from benchbook.services.run_results import with_run_status  # runs import the data layer

        for item in page.items:
            if item.kind == "run" and ctx.allows("runs:read"):
                item.details = with_run_status(conn, ctx.workspace, item.details)
        return page


def parse_dataset(payload: Any) -> Dataset:
    """Validate a dataset body; InvalidInput lists every problem by path."""
    return parse_model(Dataset, payload, "dataset")
