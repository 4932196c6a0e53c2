"""One helper for the versioned registered nouns (issue 27 item 2; issue 32): harnesses,
recipes, graders and environment recipes are registered, listed, read and tombstoned the same
way.

An item is ``{id, version, description?, …}``, immutable: its identity is the SHA-256 of its
canonical JSON; registering the same ``id@version`` with identical content is a no-op (and
revives a tombstoned version), different content is a Conflict. Owner resolution is per id with
the ``_shared`` fallback; ``latest`` is the highest live release by SemVer precedence.

A :class:`Noun` says what differs: its stored name, model, how messages name it, the actions
guarding it, where its versions live (a ``store.versioned.VersionedTable``; graders and
environment recipes share the ``registered_code`` table) and what a register checks beyond
the model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, TypeAdapter
from sqlalchemy import Connection
from sqlalchemy.exc import IntegrityError

from benchbook.contracts.registered import RegisteredSummary, RegisterResult
from benchbook.datasets.identity import canonical_json, sha256_hex
from benchbook.datasets.versions import LATEST, is_semver, parse_version, pick_latest, sort_versions
from benchbook.errors import Conflict, InvalidInput, NotFound
from benchbook.services.context import Context
from benchbook.store.registered_code import code_table
from benchbook.store.tables import SHARED_WORKSPACE
from benchbook.store.versioned import VersionedTable, VersionRow

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R", bound=BaseModel)


@dataclass(frozen=True)
class Noun(Generic[T]):
    """A registered noun.

    Attributes:
        name: its stored name (``grader``; the ``registered_code.noun`` column).
        model: the item's model (or a TypeAdapter for a union such as ``Harness``).
        title: how messages name it (``grader``, ``environment recipe``).
        plural: the authz prefix (``harnesses`` → ``harnesses:write``); default ``name + s``.
        store: where versions live; default the ``registered_code`` rows under ``name``.
        columns: ``item`` → the store's own columns of a new version (a harness's ``kind``).
        check: ``(ctx, item)`` run by :func:`register` after the rights checks; raises
            Forbidden or InvalidInput.
    """

    name: str
    model: type[T] | TypeAdapter[T]
    title: str
    plural: str = ""
    store: VersionedTable[Any] | None = None
    columns: Callable[[T], dict[str, Any]] | None = None
    check: Callable[[Context, T], None] | None = None

    @property
    def write_action(self) -> str:
        return f"{self.plural or self.name + 's'}:write"

    @property
    def read_action(self) -> str:
        return f"{self.plural or self.name + 's'}:read"

    @cached_property
    def versions(self) -> VersionedTable[Any]:
        """:attr:`store`, else the ``registered_code`` rows of :attr:`name`."""
        return self.store or code_table(self.name)


def split_ref(text: str, path: str) -> tuple[str, str]:
    """``"id@version"`` → ``(id, version)``; a bare id means ``latest``.

    Raises:
        InvalidInput: empty id or version, naming ``path``.
    """
    item_id, _, ref = text.partition("@")
    if not item_id or text.endswith("@"):
        raise InvalidInput(
            f"{path}: expected 'id' or 'id@version', got {text!r}",
            {"errors": [{"path": path, "message": "expected id@version"}]},
        )
    return item_id, ref or LATEST


def identity(item: BaseModel) -> tuple[str, str]:
    """``(canonical JSON text, sha256 hex)`` of a parsed item (defaults filled, keys sorted)."""
    body = canonical_json(item.model_dump(mode="json"))
    return body.decode("utf-8"), sha256_hex(body)


def as_result(model: type[R], result: RegisterResult) -> R:
    """``result`` as a noun's own result model (``HarnessRegisterResult`` …), same fields."""
    return model.model_validate(result.model_dump())


def register(ctx: Context, noun: Noun[T], item: T, shared: bool) -> RegisterResult:
    """Register a version (``noun.write_action``, admins; ``shared`` installation admins),
    after ``noun.check``.

    Raises:
        Forbidden: without the write action, or ``shared`` without publish rights.
        Conflict: the version exists (live or tombstoned) with different content.
    """
    ctx.require(noun.write_action)
    workspace = ctx.target_workspace(shared)
    if noun.check is not None:
        noun.check(ctx, item)
    return store_version(ctx, noun, item, workspace)


def store_version(ctx: Context, noun: Noun[T], item: T, workspace: str) -> RegisterResult:
    """Insert (or revive) a version once the caller's rights were checked.

    Raises:
        Conflict: the version exists (live or tombstoned) with different content.
    """
    body, digest = identity(item)
    item_id, version = getattr(item, "id"), getattr(item, "version")  # noqa: B009
    key, store = f"{item_id}@{version}", noun.versions
    try:
        with ctx.engine.begin() as conn:
            existing = store.find(conn, workspace, item_id, version)
            if existing is None:
                store.insert(
                    conn,
                    workspace=workspace,
                    item_id=item_id,
                    version=version,
                    is_prerelease=bool(parse_version(version).prerelease),
                    body=body,
                    content_hash=digest,
                    created_by=ctx.principal.user_id,
                    **(noun.columns(item) if noun.columns else {}),
                )
            elif existing.content_hash == digest and not existing.live:
                store.set_deleted(conn, existing.pk, deleted=False)
    except IntegrityError as exc:  # a concurrent register of the same key won the race
        raise Conflict(f"{noun.title} {key} was registered concurrently; retry") from exc
    if existing is not None and existing.content_hash != digest:
        raise Conflict(
            f"{noun.title} {key} already exists with different content; register a new version",
            {"id": item_id, "version": version},
        )
    return RegisterResult(
        workspace=workspace,
        id=item_id,
        version=version,
        created=existing is None or not existing.live,
        content_hash=digest,
    )


def resolve(conn: Connection, noun: Noun[T], workspace: str, item_id: str, ref: str) -> Any:
    """The live version ``ref`` (SemVer or ``latest``) the workspace sees (own id first, else
    ``_shared``): a row of ``noun.versions`` (a :class:`VersionRow`).

    Raises:
        NotFound: unknown id or version (tombstoned versions are not found).
    """
    store = noun.versions
    live = store.live_versions(conn, workspace, item_id)
    if not live and workspace != SHARED_WORKSPACE:
        live = store.live_versions(conn, SHARED_WORKSPACE, item_id)
    if not live:
        raise NotFound(f"{noun.title} {item_id!r} not found", {"id": item_id})
    if ref == LATEST:
        top = pick_latest(r.version for r in live)
        return next(r for r in live if r.version == top)
    row = next((r for r in live if r.version == ref), None) if is_semver(ref) else None
    if row is None:
        raise NotFound(f"{noun.title} {item_id}@{ref} not found", {"id": item_id, "version": ref})
    return row


def load(noun: Noun[T], row: VersionRow) -> T:
    """The parsed item of a stored row."""
    if isinstance(noun.model, TypeAdapter):
        return noun.model.validate_json(row.body)
    return noun.model.model_validate_json(row.body)


def get(ctx: Context, noun: Noun[T], item_id: str, version: str) -> T:
    """One version (exact SemVer or ``latest``). Raises NotFound."""
    ctx.require(noun.read_action)
    with ctx.engine.connect() as conn:
        return load(noun, resolve(conn, noun, ctx.workspace, item_id, version))


@dataclass(frozen=True)
class Listed(Generic[T]):
    """One listed id: its owner, live versions, the latest one's row and parsed item."""

    workspace: str
    item_id: str
    versions: list[VersionRow]
    top: VersionRow
    item: T

    @property
    def summary(self) -> dict[str, Any]:
        """``{workspace, id, shared, latest, versions, description}``: what every noun's
        summary model (``RegisteredSummary``, ``HarnessSummary`` …) starts with."""
        return {
            "workspace": self.workspace,
            "id": self.item_id,
            "shared": self.workspace == SHARED_WORKSPACE,
            "latest": self.top.version,
            "versions": sort_versions(v.version for v in self.versions),
            "description": getattr(self.item, "description", None),
        }


def list_latest(ctx: Context, noun: Noun[T], search: str | None) -> list[Listed[T]]:
    """Own ids plus ``_shared`` ids not shadowed by own ones, by id; ``search`` matches id and
    description (case-insensitive substring)."""
    ctx.require(noun.read_action)
    with ctx.engine.connect() as conn:
        rows = noun.versions.live_in(conn, [ctx.workspace, SHARED_WORKSPACE])
    by_key: dict[tuple[str, str], list[VersionRow]] = {}
    for r in rows:
        by_key.setdefault((r.workspace, noun.versions.item_id(r)), []).append(r)
    own = {iid for ws, iid in by_key if ws == ctx.workspace}
    needle = (search or "").lower()
    out = []
    for (ws, iid), versions in sorted(by_key.items(), key=lambda kv: kv[0][1]):
        if ws != ctx.workspace and iid in own:
            continue
        latest = pick_latest(v.version for v in versions)
        top = next(v for v in versions if v.version == latest)
        item = load(noun, top)
        description = getattr(item, "description", None)
        if needle and needle not in f"{iid}\n{description or ''}".lower():
            continue
        out.append(Listed(ws, iid, versions, top, item))
    return out


def list_items(ctx: Context, noun: Noun[T], search: str | None) -> list[RegisteredSummary]:
    """:func:`list_latest` as ``{workspace, id, shared, latest, versions, description}``."""
    return [RegisteredSummary(**s.summary) for s in list_latest(ctx, noun, search)]


def delete_version(ctx: Context, noun: Noun[T], item_id: str, version: str) -> RegisterResult:
    """Tombstone one exact version of the caller's own workspace.

    Raises:
        Forbidden: without the write action. NotFound: not an exact live version here.
    """
    ctx.require(noun.write_action)
    store = noun.versions
    with ctx.engine.begin() as conn:
        row = store.find(conn, ctx.workspace, item_id, version) if is_semver(version) else None
        if row is None or not row.live:
            raise NotFound(
                f"{noun.title} {item_id}@{version} not found (an exact version of your workspace)",
                {"id": item_id, "version": version},
            )
        store.set_deleted(conn, row.pk, deleted=True)
    return RegisterResult(
        workspace=ctx.workspace,
        id=item_id,
        version=version,
        created=False,
        content_hash=row.content_hash,
    )
