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
from benchbook.datasets.versions import LATEST
from benchbook.errors import Forbidden, InvalidInput, NotFound
from benchbook.runtime.harnesses import check_harness_templates
from benchbook.services import registered
from benchbook.services.code_rules import check_argv_files
from benchbook.services.context import Context
from benchbook.services.sandboxing import default_work_root, sandbox_policy
from benchbook.services.validation import parse_model
from benchbook.store import harnesses as repo

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


def _check_harness(ctx: Context, harness: Harness) -> None:
    if harness.kind == "python" and not ctx.principal.can_publish_shared:
        raise Forbidden(
            "python harnesses import server-side code: only installation admins register them",
            {"kind": "python"},
        )
    check_harness_templates(harness)
    policy = sandbox_policy(ctx.settings, default_work_root(ctx.settings))
    check_argv_files(harness, policy, trusted=ctx.principal.can_publish_shared)


HARNESS: registered.Noun[Harness] = registered.Noun(
    name="harness",
    model=HARNESS_ADAPTER,
    title="harness",
    plural="harnesses",
    store=repo.HARNESSES,
    columns=lambda harness: {"kind": harness.kind},
    check=_check_harness,
)
"""The harness noun: its own ``harnesses`` table (with a ``kind`` column)."""

harness_identity = registered.identity
"""``(canonical JSON text, sha256 hex)`` of a parsed harness."""


def register_harness(ctx: Context, harness: Harness, shared: bool = False) -> HarnessRegisterResult:
    """Register a harness version (immutable).

    Returns:
        ``{workspace, id, version, created, content_hash}``; ``created`` is False when the
        identical live version already existed.

    Raises:
        Forbidden: without ``harnesses:write`` (admins only), ``shared`` without publish
            rights, a ``python`` harness from anyone but an installation admin, or a
            ``command`` harness naming a file outside the sandbox by absolute path in its
            ``argv`` from anyone but an installation admin (``config.argv[i]``).
        InvalidInput: a config template names an unknown field.
        Conflict: the version exists (live or tombstoned) with different content.
    """
    result = registered.register(ctx, HARNESS, harness, shared)
    return registered.as_result(HarnessRegisterResult, result)


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
    registered.store_version(ctx, HARNESS, harness, ctx.workspace)
    with ctx.engine.connect() as conn:
        return resolve_harness(conn, ctx.workspace, harness_id, version)


def resolve_harness(conn: Connection, workspace: str, harness_id: str, ref: str) -> repo.HarnessRow:
    """The live harness version ``ref`` (SemVer or ``latest``) the workspace sees.

    Raises:
        NotFound: unknown id or version (tombstoned versions are not found).
    """
    row: repo.HarnessRow = registered.resolve(conn, HARNESS, workspace, harness_id, ref)
    return row


def load_harness(row: repo.HarnessRow) -> Harness:
    """The parsed harness of a stored row."""
    return registered.load(HARNESS, row)


def get_harness(ctx: Context, harness_id: str, version: str = LATEST) -> Harness:
    """One harness version: exact SemVer or ``latest``; ``version`` in the result is resolved.

    Raises:
        NotFound: unknown id, or no such live version for the owner.
    """
    return registered.get(ctx, HARNESS, harness_id, version)


def list_harnesses(ctx: Context, search: str | None = None) -> list[HarnessSummary]:
    """Harnesses visible to the caller: own ids plus ``_shared`` ids not shadowed by own ones,
    sorted by id; ``search`` matches id and description (case-insensitive substring)."""
    return [
        HarnessSummary(**h.summary, kind=h.item.kind)
        for h in registered.list_latest(ctx, HARNESS, search)
    ]


def delete_harness_version(ctx: Context, harness_id: str, version: str) -> HarnessRegisterResult:
    """Tombstone one exact version of the caller's own workspace (runs that used it stay
    readable; registering identical content revives it).

    Raises:
        Forbidden: without ``harnesses:write``.
        NotFound: not an exact live version of the caller's workspace.
    """
    result = registered.delete_version(ctx, HARNESS, harness_id, version)
    return registered.as_result(HarnessRegisterResult, result)
