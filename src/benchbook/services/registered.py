"""One helper for versioned registered code (issue 27 item 2; issue 32): graders and
environment recipes are registered, listed, read and tombstoned the same way.

An item is ``{id, version, description?, …}``, immutable: its identity is the SHA-256 of its
canonical JSON; registering the same ``id@version`` with identical content is a no-op (and
revives a tombstoned version), different content is a Conflict. Owner resolution is per id with
the ``_shared`` fallback; ``latest`` is the highest live release by SemVer precedence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from pydantic import BaseModel
from sqlalchemy import Connection
from sqlalchemy.exc import IntegrityError

from benchbook.contracts.registered import RegisteredSummary, RegisterResult
from benchbook.datasets.identity import canonical_json, sha256_hex
from benchbook.datasets.versions import LATEST, is_semver, parse_version, pick_latest, sort_versions
from benchbook.errors import Conflict, InvalidInput, NotFound
from benchbook.services.context import Context
from benchbook.store import registered_code as repo
from benchbook.store.tables import SHARED_WORKSPACE

T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True)
class Noun(Generic[T]):
    """A registered noun: its stored name (``grader``), model and the actions guarding it."""

    name: str
    model: type[T]
    title: str  # "grader", "environment recipe": how messages name it

    @property
    def write_action(self) -> str:
        return f"{self.name}s:write"

    @property
    def read_action(self) -> str:
        return f"{self.name}s:read"


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


def register(ctx: Context, noun: Noun[T], item: T, shared: bool) -> RegisterResult:
    """Register a version (``noun.write_action``, admins; ``shared`` installation admins).

    Raises:
        Forbidden: without the write action, or ``shared`` without publish rights.
        Conflict: the version exists (live or tombstoned) with different content.
    """
    ctx.require(noun.write_action)
    workspace = ctx.target_workspace(shared)
    body_bytes = canonical_json(item.model_dump(mode="json"))
    body, digest = body_bytes.decode("utf-8"), sha256_hex(body_bytes)
    item_id, version = getattr(item, "id"), getattr(item, "version")  # noqa: B009
    key = f"{item_id}@{version}"
    try:
        with ctx.engine.begin() as conn:
            existing = repo.find_item(conn, noun.name, workspace, item_id, version)
            if existing is None:
                repo.insert_item(
                    conn,
                    noun=noun.name,
                    workspace=workspace,
                    item_id=item_id,
                    version=version,
                    is_prerelease=bool(parse_version(version).prerelease),
                    body=body,
                    content_hash=digest,
                    created_by=ctx.principal.user_id,
                )
            elif existing.content_hash == digest and not existing.live:
                repo.set_deleted(conn, existing.pk, deleted=False)
    except IntegrityError as exc:
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


def resolve(
    conn: Connection, noun: Noun[T], workspace: str, item_id: str, ref: str
) -> repo.CodeRow:
    """The live version ``ref`` (SemVer or ``latest``) the workspace sees (own id first, else
    ``_shared``).

    Raises:
        NotFound: unknown id or version (tombstoned versions are not found).
    """
    live = repo.live_versions(conn, noun.name, workspace, item_id)
    if not live and workspace != SHARED_WORKSPACE:
        live = repo.live_versions(conn, noun.name, SHARED_WORKSPACE, item_id)
    if not live:
        raise NotFound(f"{noun.title} {item_id!r} not found", {"id": item_id})
    if ref == LATEST:
        top = pick_latest(r.version for r in live)
        return next(r for r in live if r.version == top)
    row = next((r for r in live if r.version == ref), None) if is_semver(ref) else None
    if row is None:
        raise NotFound(f"{noun.title} {item_id}@{ref} not found", {"id": item_id, "version": ref})
    return row


def load(noun: Noun[T], row: repo.CodeRow) -> T:
    """The parsed item of a stored row."""
    return noun.model.model_validate_json(row.body)


def get(ctx: Context, noun: Noun[T], item_id: str, version: str) -> T:
    """One version (exact SemVer or ``latest``). Raises NotFound."""
    ctx.require(noun.read_action)
    with ctx.engine.connect() as conn:
        return load(noun, resolve(conn, noun, ctx.workspace, item_id, version))


def list_items(ctx: Context, noun: Noun[T], search: str | None) -> list[RegisteredSummary]:
    """Own ids plus ``_shared`` ids not shadowed by own ones, by id; ``search`` matches id and
    description (case-insensitive substring)."""
    ctx.require(noun.read_action)
    with ctx.engine.connect() as conn:
        rows = repo.live_in(conn, noun.name, [ctx.workspace, SHARED_WORKSPACE])
    by_key: dict[tuple[str, str], list[repo.CodeRow]] = {}
    for r in rows:
        by_key.setdefault((r.workspace, r.item_id), []).append(r)
    own = {iid for ws, iid in by_key if ws == ctx.workspace}
    needle = (search or "").lower()
    out = []
    for (ws, iid), versions in sorted(by_key.items(), key=lambda kv: kv[0][1]):
        if ws != ctx.workspace and iid in own:
            continue
        latest = pick_latest(v.version for v in versions)
        top = load(noun, next(v for v in versions if v.version == latest))
        description = getattr(top, "description", None)
        if needle and needle not in f"{iid}\n{description or ''}".lower():
            continue
        out.append(
            RegisteredSummary(
                workspace=ws,
                id=iid,
                shared=ws == SHARED_WORKSPACE,
                latest=latest,
                versions=sort_versions(v.version for v in versions),
                description=description,
            )
        )
    return out


def delete_version(ctx: Context, noun: Noun[T], item_id: str, version: str) -> RegisterResult:
    """Tombstone one exact version of the caller's own workspace.

    Raises:
        Forbidden: without the write action. NotFound: not an exact live version here.
    """
    ctx.require(noun.write_action)
    with ctx.engine.begin() as conn:
        row = (
            repo.find_item(conn, noun.name, ctx.workspace, item_id, version)
            if is_semver(version)
            else None
        )
        if row is None or not row.live:
            raise NotFound(
                f"{noun.title} {item_id}@{version} not found (an exact version of your workspace)",
                {"id": item_id, "version": version},
            )
        repo.set_deleted(conn, row.pk, deleted=True)
    return RegisterResult(
        workspace=ctx.workspace,
        id=item_id,
        version=version,
        created=False,
        content_hash=row.content_hash,
    )
