"""Storing a dataset version (SPEC B): the register core every writer shares (``register``,
imports, uploads), from a stream of case rows in one transaction.

A version is immutable: the same content again is a no-op, the same content on a tombstoned
version revives it, different content is a Conflict that says what differs; repeated case ids
are InvalidInput naming their rows (or the source's line numbers).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.exc import IntegrityError

from benchbook.contracts import Case
from benchbook.contracts.common import RESOURCE_ID_RE
from benchbook.contracts.registry import RegisterResult
from benchbook.datasets.diff import changed_meta_fields, count_case_differences, describe_difference
from benchbook.datasets.identity import VersionHasher, case_body, sha256_hex, version_hash
from benchbook.datasets.versions import parse_version
from benchbook.errors import Conflict, InvalidInput
from benchbook.services.context import Context
from benchbook.store import datasets as repo
from benchbook.store.events import add_event

#: The source's number of each stored case, by position, and what it counts (``line``, ``row``).
RowNumbers = tuple[Sequence[int], str]


def case_rows(cases: Iterable[Case]) -> Iterator[repo.CaseRow]:
    """``(id, canonical body, sha256)`` for each parsed case."""
    for case in cases:
        body = case_body(case)
        yield case.id, body, sha256_hex(body)


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
    if row is None or not row.live or changed_meta_fields(stored_meta(row), meta):
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
            dataset_event(conn, workspace, dataset_id, "revived", actor, version)
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
    dataset_event(conn, workspace, dataset_id, "registered", actor, version, cases=count)
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


def stored_meta(row: repo.VersionRow) -> dict[str, Any]:
    """A stored version's canonical metadata: ``{description, tags, produced_by}``."""
    return {"description": row.description, "tags": row.tags, "produced_by": row.produced_by}


def content_difference(
    conn: Connection,
    existing: repo.VersionRow,
    meta: dict[str, Any],
    incoming: list[tuple[str, str]],
) -> tuple[str, dict[str, Any]]:
    """What differs between a stored version and incoming content: the diff's own terms."""
    cases = count_case_differences(
        (pair for pairs in repo.case_hashes_by_id(conn, existing.pk) for pair in pairs), incoming
    )
    fields = changed_meta_fields(stored_meta(existing), meta)
    return describe_difference(cases, fields), {"cases": cases, "meta": fields}


def _conflict(
    conn: Connection,
    existing: repo.VersionRow,
    meta: dict[str, Any],
    incoming: list[tuple[str, str]],
) -> Conflict:
    """Conflict naming id@version and saying whether cases (how many) or only metadata differ."""
    said, details = content_difference(conn, existing, meta, incoming)
    key = f"{existing.dataset_id}@{existing.version}"
    return Conflict(
        f"{key} already exists with different content: {said}; register a new version instead",
        {"id": existing.dataset_id, "version": existing.version, **details},
    )


def dataset_event(
    conn: Connection, ws: str, dataset_id: str, kind: str, actor: str, version: str, **extra: Any
) -> None:
    """Record a dataset event (``registered``, ``revived``, ``deleted``, ``tagged``) of one
    version in ``conn``'s transaction, ``extra`` added to its details."""
    add_event(
        conn,
        workspace=ws,
        resource_type="dataset",
        resource_id=dataset_id,
        kind=kind,
        actor=actor,
        details={"version": version, **extra},
    )
