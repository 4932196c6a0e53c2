"""Harness operations (SPEC H.1): register, list, get and delete harness versions.

A harness is immutable and versioned exactly like a dataset: its identity is the SHA-256 of its
canonical JSON (the parsed model with defaults filled); registering the same ``id@version`` with
identical content is a no-op (and revives a tombstoned version), different content is a
Conflict. Owner resolution is per id with the ``_shared`` fallback; ``latest`` is the highest
live release by SemVer precedence. Registering needs ``harnesses:write`` (admins only): a
``command`` or ``python`` harness is code the server will execute.
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter
from sqlalchemy import Connection
from sqlalchemy.exc import IntegrityError

from benchbook.contracts.harness import (
    AgentHarness,
    AnyHarness,
    CommandHarness,
    ExternalHarness,
    Harness,
    HarnessRegisterResult,
    HarnessSummary,
    OpenAIHarness,
    PythonHarness,
)
from benchbook.datasets.identity import canonical_json, sha256_hex
from benchbook.datasets.versions import LATEST, is_semver, parse_version, pick_latest, sort_versions
from benchbook.errors import Conflict, Forbidden, InvalidInput, NotFound
from benchbook.runtime.harnesses import check_harness_templates
from benchbook.services.context import Context
from benchbook.services.validation import parse_model
from benchbook.store import harnesses as repo
from benchbook.store.tables import SHARED_WORKSPACE

HARNESS_ADAPTER: TypeAdapter[Harness] = TypeAdapter(Harness)


_KINDS: dict[str, type[AnyHarness]] = {
    "command": CommandHarness,
    "openai": OpenAIHarness,
    "python": PythonHarness,
    "agent": AgentHarness,
    "external": ExternalHarness,
}


def parse_harness(payload: Any) -> Harness:
    """Validate a harness body by its ``kind``; InvalidInput lists every problem by path
    (``config.argv.0``), including template fields that do not exist.

    Raises:
        InvalidInput: not an object, a missing or unknown ``kind``, a bad config, or an unknown
            template field (``config.argv[1]: unknown template field 'answer' …``).
    """
    kind = payload.get("kind") if isinstance(payload, dict) else None
    model = _KINDS.get(kind) if isinstance(kind, str) else None
    if model is None:
        known = ", ".join(_KINDS)
        raise InvalidInput(
            f"invalid harness: kind must be one of {known}, got {kind!r}",
            {"errors": [{"path": "kind", "message": f"expected one of {known}"}]},
        )
    harness = parse_model(model, payload, "harness")
    check_harness_templates(harness)
    return harness


def harness_identity(harness: Harness) -> tuple[str, str]:
    """``(canonical JSON text, sha256 hex)`` of a parsed harness."""
    body = canonical_json(harness.model_dump(mode="json"))
    return body.decode("utf-8"), sha256_hex(body)


def register_harness(ctx: Context, harness: Harness, shared: bool = False) -> HarnessRegisterResult:
    """Register a harness version (immutable).

    Returns:
        ``{workspace, id, version, created, content_hash}``; ``created`` is False when the
        identical live version already existed.

    Raises:
        Forbidden: without ``harnesses:write`` (admins only), ``shared`` without publish
            rights, or a ``python`` harness from anyone but an installation admin.
        InvalidInput: a config template names an unknown field.
        Conflict: the version exists (live or tombstoned) with different content.
    """
    ctx.require("harnesses:write")
    workspace = ctx.target_workspace(shared)
    if harness.kind == "python" and not ctx.principal.can_publish_shared:
        raise Forbidden(
            "python harnesses import server-side code: only installation admins register them",
            {"kind": "python"},
        )
    check_harness_templates(harness)
    return _store_harness(ctx, harness, workspace)


def _store_harness(ctx: Context, harness: Harness, workspace: str) -> HarnessRegisterResult:
    """Insert (or revive) a harness version once the caller's rights were checked."""
    body, digest = harness_identity(harness)
    key = f"{harness.id}@{harness.version}"
    try:
        with ctx.engine.begin() as conn:
            existing = repo.find_harness(conn, workspace, harness.id, harness.version)
            if existing is None:
                repo.insert_harness(
                    conn,
                    workspace=workspace,
                    harness_id=harness.id,
                    version=harness.version,
                    is_prerelease=bool(parse_version(harness.version).prerelease),
                    kind=harness.kind,
                    body=body,
                    content_hash=digest,
                    created_by=ctx.principal.user_id,
                )
            elif existing.content_hash == digest and not existing.live:
                repo.set_deleted(conn, existing.pk, deleted=False)
    except IntegrityError as exc:
        raise Conflict(f"harness {key} was registered concurrently; retry") from exc
    if existing is not None and existing.content_hash != digest:
        raise Conflict(
            f"harness {key} already exists with different content; register a new version",
            {"id": harness.id, "version": harness.version},
        )
    return HarnessRegisterResult(
        workspace=workspace,
        id=harness.id,
        version=harness.version,
        created=existing is None or not existing.live,
        content_hash=digest,
    )


def external_harness(ctx: Context, harness_id: str, version: str) -> repo.HarnessRow:
    """The harness ``harness_id@version`` results are reported for: the live version the
    workspace sees, else a new ``external`` harness stored in the caller's workspace (no code
    to execute, so ``runs:write`` is enough; the caller checked it). Not an operation.

    Raises:
        InvalidInput: a malformed id or a version that is not SemVer.
        Conflict: a tombstoned version of that key with other content exists.
    """
    with ctx.engine.connect() as conn:
        try:
            return resolve_harness(conn, ctx.workspace, harness_id, version)
        except NotFound:
            pass
    harness = parse_model(
        ExternalHarness, {"id": harness_id, "version": version, "kind": "external"}, "harness"
    )
    _store_harness(ctx, harness, ctx.workspace)
    with ctx.engine.connect() as conn:
        return resolve_harness(conn, ctx.workspace, harness_id, version)


def _owner(conn: Connection, workspace: str, harness_id: str) -> str:
    if repo.count_live(conn, workspace, harness_id):
        return workspace
    if workspace != SHARED_WORKSPACE and repo.count_live(conn, SHARED_WORKSPACE, harness_id):
        return SHARED_WORKSPACE
    raise NotFound(f"harness {harness_id!r} not found", {"id": harness_id})


def resolve_harness(conn: Connection, workspace: str, harness_id: str, ref: str) -> repo.HarnessRow:
    """The live harness version ``ref`` (SemVer or ``latest``) the workspace sees.

    Raises:
        NotFound: unknown id or version (tombstoned versions are not found).
    """
    owner = _owner(conn, workspace, harness_id)
    live = repo.live_versions(conn, owner, harness_id)
    if ref == LATEST:
        top = pick_latest(r.version for r in live)
        return next(r for r in live if r.version == top)
    row = next((r for r in live if r.version == ref), None) if is_semver(ref) else None
    if row is None:
        raise NotFound(f"harness {harness_id}@{ref} not found", {"id": harness_id, "version": ref})
    return row


def load_harness(row: repo.HarnessRow) -> Harness:
    """The parsed harness of a stored row."""
    return HARNESS_ADAPTER.validate_json(row.body)


def get_harness(ctx: Context, harness_id: str, version: str = LATEST) -> Harness:
    """One harness version: exact SemVer or ``latest``; ``version`` in the result is resolved.

    Raises:
        NotFound: unknown id, or no such live version for the owner.
    """
    ctx.require("harnesses:read")
    with ctx.engine.connect() as conn:
        row = resolve_harness(conn, ctx.workspace, harness_id, version)
    return load_harness(row)


def list_harnesses(ctx: Context, search: str | None = None) -> list[HarnessSummary]:
    """Harnesses visible to the caller: own ids plus ``_shared`` ids not shadowed by own ones,
    sorted by id; ``search`` matches id and description (case-insensitive substring)."""
    ctx.require("harnesses:read")
    with ctx.engine.connect() as conn:
        rows = repo.live_in(conn, [ctx.workspace, SHARED_WORKSPACE])
    by_key: dict[tuple[str, str], list[repo.HarnessRow]] = {}
    for r in rows:
        by_key.setdefault((r.workspace, r.harness_id), []).append(r)
    own = {hid for ws, hid in by_key if ws == ctx.workspace}
    needle = (search or "").lower()
    out = []
    for (ws, hid), versions in sorted(by_key.items(), key=lambda kv: kv[0][1]):
        if ws != ctx.workspace and hid in own:
            continue
        latest = pick_latest(v.version for v in versions)
        top = load_harness(next(v for v in versions if v.version == latest))
        if needle and needle not in f"{hid}\n{top.description or ''}".lower():
            continue
        out.append(
            HarnessSummary(
                workspace=ws,
                id=hid,
                shared=ws == SHARED_WORKSPACE,
                kind=top.kind,
                latest=latest,
                versions=sort_versions(v.version for v in versions),
                description=top.description,
            )
        )
    return out


def delete_harness_version(ctx: Context, harness_id: str, version: str) -> HarnessRegisterResult:
    """Tombstone one exact version of the caller's own workspace (runs that used it stay
    readable; registering identical content revives it).

    Raises:
        Forbidden: without ``harnesses:write``.
        NotFound: not an exact live version of the caller's workspace.
    """
    ctx.require("harnesses:write")
    with ctx.engine.begin() as conn:
        row = (
            repo.find_harness(conn, ctx.workspace, harness_id, version)
            if is_semver(version)
            else None
        )
        if row is None or not row.live:
            raise NotFound(
                f"harness {harness_id}@{version} not found (an exact version of your workspace)",
                {"id": harness_id, "version": version},
            )
        repo.set_deleted(conn, row.pk, deleted=True)
    return HarnessRegisterResult(
        workspace=ctx.workspace,
        id=harness_id,
        version=version,
        created=False,
        content_hash=row.content_hash,
    )
