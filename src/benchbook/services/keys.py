"""API keys (SPEC C): ``bb_`` + 43 random URL-safe characters (256 bits), stored as SHA-256.

A key belongs to one user in one workspace and carries a scope; its effective role is
``min(scope, membership role)`` at each request, so demoting the member takes effect at once.
Removing the member revokes their keys in that workspace for good (adding them again revives
none). A new key's scope is capped at the lower of the caller's role and the owner's role. The
plain key is returned once, by :func:`create_api_key`.
"""

from __future__ import annotations

import hashlib
import secrets as random_source

from sqlalchemy import Connection

from benchbook.contracts.accounts import ApiKeyInfo, CreatedApiKey, KeyScope
from benchbook.errors import Forbidden, InvalidInput, NotFound
from benchbook.services.accounts import find_user
from benchbook.services.authz import Role
from benchbook.services.context import Context
from benchbook.store import accounts as repo
from benchbook.store.tables import utcnow

KEY_PREFIX = "bb_"
SCOPE_ROLE: dict[str, Role] = {"read": "viewer", "write": "member", "admin": "admin"}
RANK: dict[str, int] = {"viewer": 0, "member": 1, "admin": 2}
SCOPES: tuple[KeyScope, ...] = ("read", "write", "admin")
ROLES: tuple[Role, ...] = ("viewer", "member", "admin")


def key_hash(key: str) -> str:
    """SHA-256 hex of a key: enough for 256-bit random secrets (no dictionary to attack)."""
    return hashlib.sha256(key.encode()).hexdigest()


def effective_role(scope: str, membership_role: str) -> Role:
    """``min(scope's role, membership role)``: a key never exceeds its owner."""
    return ROLES[min(RANK[SCOPE_ROLE[scope]], RANK[membership_role])]


def parse_scope(value: str) -> KeyScope:
    """``value`` as a KeyScope. Raises InvalidInput (path ``scope``) when unknown."""
    for scope in SCOPES:
        if value == scope:
            return scope
    raise InvalidInput(
        f"scope must be one of {', '.join(SCOPES)}, not {value!r}",
        {"errors": [{"path": "scope", "message": "unknown scope"}]},
    )


def _info(row: repo.KeyRow) -> ApiKeyInfo:
    return ApiKeyInfo(
        id=row.id,
        name=row.name,
        prefix=row.prefix,
        workspace=row.workspace,
        user_id=row.user_id,
        scope=parse_scope(row.scope),
        created_by=row.created_by,
        created_at=row.created_at,
        last_used_at=row.last_used_at,
        revoked_at=row.revoked_at,
    )


def _owner(conn: Connection, ctx: Context, user: str | None) -> repo.MemberRow:
    """The member who will own the key: the caller, or (``members:manage``) another member."""
    if user is None:
        found = repo.find_member(conn, ctx.workspace, ctx.principal.user_id)
        if found is None:
            raise InvalidInput("the caller has no user account here; name the key's user")
        return found
    row = find_user(conn, user)
    if row.id != ctx.principal.user_id:
        ctx.require("members:manage")
    found = repo.find_member(conn, ctx.workspace, row.id)
    if found is None:
        raise NotFound(f"{user!r} is not a member of {ctx.workspace}", {"user": user})
    return found


def _check_scope(ctx: Context, owner: repo.MemberRow, scope: KeyScope) -> None:
    """InvalidInput unless ``scope`` is within both the owner's role and the caller's own role
    (for a key: its effective scope), so a key never mints a key stronger than itself."""
    if RANK[SCOPE_ROLE[scope]] > RANK[ctx.principal.role]:
        raise InvalidInput(
            f"scope {scope!r} exceeds the calling key's or session's role "
            f"{ctx.principal.role!r}; create it with a stronger key or from a session",
            {"errors": [{"path": "scope", "message": "exceeds the caller's role"}]},
        )
    if RANK[SCOPE_ROLE[scope]] > RANK[owner.role]:
        raise InvalidInput(
            f"scope {scope!r} exceeds {owner.email}'s role {owner.role!r}",
            {"errors": [{"path": "scope", "message": "exceeds the owner's role"}]},
        )


def create_api_key(
    ctx: Context, name: str, scope: KeyScope = "write", user: str | None = None
) -> CreatedApiKey:
    """Create a key for the caller (or, for admins, for ``user``, an email or id) in the
    caller's workspace. The returned ``key`` is shown once.

    Raises InvalidInput for an empty or over-100-character name, an unknown scope, or a scope
    above the owner's role or above the caller's own role (a read-scoped key mints read keys
    only).
    """
    ctx.require("account:manage")
    scope = parse_scope(scope)
    name = name.strip()
    if not 1 <= len(name) <= 100:
        raise InvalidInput(
            "key name must be 1-100 characters",
            {"errors": [{"path": "name", "message": "empty or too long"}]},
        )
    key = KEY_PREFIX + random_source.token_urlsafe(32)
    with ctx.engine.begin() as conn:
        owner = _owner(conn, ctx, user)
        _check_scope(ctx, owner, scope)
        row = repo.KeyRow(
            id="key_" + random_source.token_hex(8),
            user_id=owner.user_id,
            workspace=ctx.workspace,
            name=name,
            prefix=key[:10],
            scope=scope,
            created_by=ctx.principal.user_id,
            created_at=utcnow(),
            last_used_at=None,
            revoked_at=None,
        )
        repo.insert_key(conn, row, key_hash(key))
    return CreatedApiKey(key=key, info=_info(row))


def list_api_keys(ctx: Context, all_users: bool = False) -> list[ApiKeyInfo]:
    """The caller's keys in this workspace, newest first; ``all_users`` (admin) lists everyone's."""
    ctx.require("members:manage" if all_users else "account:manage")
    with ctx.engine.connect() as conn:
        rows = repo.list_keys(conn, ctx.workspace, None if all_users else ctx.principal.user_id)
    return [_info(r) for r in rows]


def revoke_api_key(ctx: Context, key_id: str) -> ApiKeyInfo:
    """Revoke a key: the next request with it is Unauthenticated.

    Own keys: any member; others' keys: ``members:manage`` (else Forbidden). A key of another
    workspace is NotFound. Revoking twice is a no-op.
    """
    ctx.require("account:manage")
    with ctx.engine.begin() as conn:
        row = repo.find_key(conn, ctx.workspace, key_id)
        if row is None:
            raise NotFound(f"API key {key_id!r} not found", {"id": key_id})
        if row.user_id != ctx.principal.user_id and not ctx.allows("members:manage"):
            raise Forbidden("only admins may revoke another member's key", {"id": key_id})
        repo.revoke_key(conn, key_id)
        found = repo.find_key(conn, ctx.workspace, key_id)
    assert found is not None
    return _info(found)
