"""Accounts repository: users, workspaces, memberships, API keys and login sessions.

Functions take an open ``Connection`` so callers own the transaction. Only hashes of passwords,
API keys and session tokens reach the database.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, delete, false, func, insert, select, update

from benchbook.store.tables import (
    SHARED_WORKSPACE,
    api_keys,
    memberships,
    sessions,
    users,
    utcnow,
    workspaces,
)


@dataclass(frozen=True)
class UserRow:
    """A stored user (with the password hash, which never leaves the services)."""

    id: str
    email: str
    display_name: str
    password_hash: str | None
    installation_admin: bool
    created_at: datetime


@dataclass(frozen=True)
class MemberRow:
    """A membership joined with its user."""

    workspace: str
    user_id: str
    email: str
    display_name: str
    role: str
    created_at: datetime


@dataclass(frozen=True)
class KeyRow:
    """A stored API key (hash only)."""

    id: str
    user_id: str
    workspace: str
    name: str
    prefix: str
    scope: str
    created_by: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


@dataclass(frozen=True)
class SessionRow:
    """A login session (the token's hash is its key)."""

    user_id: str
    workspace: str
    created_at: datetime
    expires_at: datetime


_U = users.c
_M = memberships.c
_K = api_keys.c


def _user(r: Any) -> UserRow:
    return UserRow(
        r.id, r.email, r.display_name, r.password_hash, bool(r.installation_admin), r.created_at
    )


def count_users(conn: Connection) -> int:
    """How many users exist."""
    return int(conn.scalar(select(func.count()).select_from(users)) or 0)


def count_non_admin_users(conn: Connection) -> int:
    """How many users are not installation admins."""
    query = select(func.count()).select_from(users).where(_U.installation_admin == false())
    return int(conn.scalar(query) or 0)


def count_workspaces(conn: Connection) -> int:
    """Number of workspaces people work in (the built-in ``_shared`` one not counted)."""
    query = select(func.count()).where(workspaces.c.id != SHARED_WORKSPACE)
    return int(conn.scalar(query) or 0)


def insert_user(
    conn: Connection,
    *,
    user_id: str,
    email: str,
    display_name: str,
    password_hash: str | None,
    installation_admin: bool,
) -> None:
    """Insert a user; the unique ``email_key`` (lower-cased email) raises IntegrityError."""
    conn.execute(
        insert(users).values(
            id=user_id,
            email=email,
            email_key=email.lower(),
            display_name=display_name,
            password_hash=password_hash,
            installation_admin=installation_admin,
            created_at=utcnow(),
        )
    )


def find_user_by_email(conn: Connection, email: str) -> UserRow | None:
    """The user with this email, compared case-insensitively, or None."""
    r = conn.execute(select(users).where(_U.email_key == email.strip().lower())).first()
    return _user(r) if r else None


def find_user(conn: Connection, user_id: str) -> UserRow | None:
    """The user with this id, or None."""
    r = conn.execute(select(users).where(_U.id == user_id)).first()
    return _user(r) if r else None


def list_users(conn: Connection) -> list[UserRow]:
    """Every user, by email."""
    return [_user(r) for r in conn.execute(select(users).order_by(_U.email_key))]


def set_password_hash(conn: Connection, user_id: str, password_hash: str) -> None:
    """Replace a user's password hash."""
    conn.execute(update(users).where(_U.id == user_id).values(password_hash=password_hash))


def find_workspace(conn: Connection, workspace: str) -> tuple[str, str, datetime] | None:
    """``(id, name, created_at)`` of a workspace, or None."""
    w = workspaces.c
    r = conn.execute(select(w.id, w.name, w.created_at).where(w.id == workspace)).first()
    return (r.id, r.name, r.created_at) if r else None


def insert_workspace(conn: Connection, workspace: str, name: str) -> None:
    """Insert a workspace; an existing id raises IntegrityError."""
    conn.execute(insert(workspaces).values(id=workspace, name=name, created_at=utcnow()))


def list_workspaces_of(conn: Connection, user_id: str) -> list[tuple[str, str, datetime]]:
    """``(id, name, created_at)`` of the workspaces a user belongs to, by id."""
    w = workspaces.c
    q = (
        select(w.id, w.name, w.created_at)
        .join(memberships, _M.workspace == w.id)
        .where(_M.user_id == user_id)
        .order_by(w.id)
    )
    return [(r.id, r.name, r.created_at) for r in conn.execute(q)]


def _members_query() -> Any:
    return select(_M.workspace, _M.user_id, _U.email, _U.display_name, _M.role, _M.created_at).join(
        users, users.c.id == _M.user_id
    )


def find_member(conn: Connection, workspace: str, user_id: str) -> MemberRow | None:
    """A user's membership in a workspace, or None."""
    q = _members_query().where(_M.workspace == workspace, _M.user_id == user_id)
    r = conn.execute(q).first()
    return MemberRow(*r) if r else None


def list_members(conn: Connection, workspace: str) -> list[MemberRow]:
    """The workspace's members, by email."""
    q = _members_query().where(_M.workspace == workspace).order_by(_U.email_key)
    return [MemberRow(*r) for r in conn.execute(q)]


def count_admins(conn: Connection, workspace: str) -> int:
    """How many admins a workspace has."""
    q = select(func.count()).where(_M.workspace == workspace, _M.role == "admin")
    return int(conn.scalar(q.select_from(memberships)) or 0)


def upsert_member(conn: Connection, workspace: str, user_id: str, role: str) -> None:
    """Add a membership or change its role."""
    done = conn.execute(
        update(memberships)
        .where(_M.workspace == workspace, _M.user_id == user_id)
        .values(role=role)
    )
    if not done.rowcount:
        conn.execute(
            insert(memberships).values(
                workspace=workspace, user_id=user_id, role=role, created_at=utcnow()
            )
        )


def delete_member(conn: Connection, workspace: str, user_id: str) -> None:
    """Remove a membership, end the user's sessions in that workspace and revoke their keys
    there (for good: adding the user again must not bring old keys back)."""
    conn.execute(delete(memberships).where(_M.workspace == workspace, _M.user_id == user_id))
    s = sessions.c
    conn.execute(delete(sessions).where(s.workspace == workspace, s.user_id == user_id))
    conn.execute(
        update(api_keys)
        .where(_K.workspace == workspace, _K.user_id == user_id, _K.revoked_at.is_(None))
        .values(revoked_at=utcnow())
    )


def _key(r: Any) -> KeyRow:
    return KeyRow(
        r.id,
        r.user_id,
        r.workspace,
        r.name,
        r.prefix,
        r.scope,
        r.created_by,
        r.created_at,
        r.last_used_at,
        r.revoked_at,
    )


def insert_key(conn: Connection, row: KeyRow, key_hash: str) -> None:
    """Store a new API key by its hash."""
    conn.execute(
        insert(api_keys).values(
            id=row.id,
            user_id=row.user_id,
            workspace=row.workspace,
            name=row.name,
            prefix=row.prefix,
            key_hash=key_hash,
            scope=row.scope,
            created_by=row.created_by,
            created_at=row.created_at,
        )
    )


@dataclass(frozen=True)
class KeyHolder:
    """An API key with its owner and the owner's role in the key's workspace (None when the
    owner is no longer a member there)."""

    key: KeyRow
    user: UserRow
    member_role: str | None


def find_key_holder(conn: Connection, key_hash: str) -> KeyHolder | None:
    """The key with this hash (revoked or not), its user and membership role, in one
    statement (every API request reads it); None when unknown."""
    q = (
        select(
            *api_keys.c,
            _U.email,
            _U.display_name,
            _U.password_hash,
            _U.installation_admin,
            _U.created_at.label("user_created_at"),
            _M.role,
        )
        .join(users, _U.id == _K.user_id)
        .outerjoin(memberships, (_M.workspace == _K.workspace) & (_M.user_id == _K.user_id))
        .where(_K.key_hash == key_hash)
    )
    r = conn.execute(q).first()
    if r is None:
        return None
    user = UserRow(
        r.user_id, r.email, r.display_name, r.password_hash, bool(r.installation_admin),
        r.user_created_at,
    )  # fmt: skip
    return KeyHolder(_key(r), user, r.role)


def find_key(conn: Connection, workspace: str, key_id: str) -> KeyRow | None:
    """A key of the workspace by id, or None."""
    r = conn.execute(select(api_keys).where(_K.workspace == workspace, _K.id == key_id)).first()
    return _key(r) if r else None


def list_keys(conn: Connection, workspace: str, user_id: str | None) -> list[KeyRow]:
    """Keys of a workspace (of one user when ``user_id`` is given), newest first."""
    q = select(api_keys).where(_K.workspace == workspace)
    if user_id is not None:
        q = q.where(_K.user_id == user_id)
    return [_key(r) for r in conn.execute(q.order_by(_K.created_at.desc(), _K.id))]


def touch_key(conn: Connection, key_id: str, at: datetime) -> None:
    """Record a key's use."""
    conn.execute(update(api_keys).where(_K.id == key_id).values(last_used_at=at))


def revoke_key(conn: Connection, key_id: str) -> None:
    """Mark a key revoked (kept for the audit trail)."""
    conn.execute(
        update(api_keys).where(_K.id == key_id, _K.revoked_at.is_(None)).values(revoked_at=utcnow())
    )


def insert_session(
    conn: Connection, token_hash: str, user_id: str, workspace: str, expires_at: datetime
) -> None:
    """Store a login session by its token's hash."""
    conn.execute(
        insert(sessions).values(
            token_hash=token_hash,
            user_id=user_id,
            workspace=workspace,
            created_at=utcnow(),
            expires_at=expires_at,
        )
    )


def find_session(conn: Connection, token_hash: str) -> SessionRow | None:
    """The session with this token hash, or None."""
    s = sessions.c
    q = select(s.user_id, s.workspace, s.created_at, s.expires_at).where(s.token_hash == token_hash)
    r = conn.execute(q).first()
    return SessionRow(*r) if r else None


def delete_sessions_of(conn: Connection, user_id: str) -> None:
    """End every session of a user (in every workspace)."""
    conn.execute(delete(sessions).where(sessions.c.user_id == user_id))


def delete_session(conn: Connection, token_hash: str) -> None:
    """End a session."""
    conn.execute(delete(sessions).where(sessions.c.token_hash == token_hash))


def list_all_workspaces(conn: Connection) -> list[tuple[str, str, datetime]]:
    """``(id, name, created_at)`` of every workspace, by id."""
    w = workspaces.c
    return [
        (r.id, r.name, r.created_at)
        for r in conn.execute(select(w.id, w.name, w.created_at).order_by(w.id))
    ]
