"""Users, workspaces and members (SPEC C).

Users and workspaces are installation-wide: only installation admins (the principal's
``can_publish_shared``, which the local CLI admin has) create them. Members are managed per
workspace with ``members:manage``; a workspace always keeps at least one admin.
"""

from __future__ import annotations

import re
import secrets as random_source
from dataclasses import replace

from argon2 import PasswordHasher
from sqlalchemy import Connection, Engine
from sqlalchemy.exc import IntegrityError

from benchbook.contracts.accounts import Member, Role, User, Workspace
from benchbook.errors import Conflict, Forbidden, InvalidInput, NotFound
from benchbook.services.context import Context
from benchbook.store import accounts as repo
from benchbook.store.tables import DEFAULT_WORKSPACE, SHARED_WORKSPACE

EMAIL_RE = re.compile(r"^[^@\s]{1,200}@[^@\s]{1,200}$")
WORKSPACE_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
MIN_PASSWORD_CHARS = 8
BOOTSTRAP_EMAIL = "admin@localhost"
ROLES: tuple[Role, ...] = ("viewer", "member", "admin")

#: argon2id with the library's defaults (RFC 9106 low-memory profile).
PASSWORDS = PasswordHasher()


def _bad(path: str, message: str) -> InvalidInput:
    return InvalidInput(f"{path}: {message}", {"errors": [{"path": path, "message": message}]})


def hash_password(password: str) -> str:
    """An argon2id hash of ``password``. Raises InvalidInput under 8 characters."""
    if len(password) < MIN_PASSWORD_CHARS:
        raise _bad("password", f"must be at least {MIN_PASSWORD_CHARS} characters")
    return PASSWORDS.hash(password)


def _user(row: repo.UserRow) -> User:
    return User(
        id=row.id,
        email=row.email,
        display_name=row.display_name,
        installation_admin=row.installation_admin,
        created_at=row.created_at,
    )


def _member(row: repo.MemberRow) -> Member:
    return Member(
        workspace=row.workspace,
        user_id=row.user_id,
        email=row.email,
        display_name=row.display_name,
        role=_role(row.role),
        created_at=row.created_at,
    )


def _role(value: str) -> Role:
    for role in ROLES:
        if value == role:
            return role
    raise _bad("role", f"must be one of {', '.join(ROLES)}, not {value!r}")


def require_installation_admin(ctx: Context) -> None:
    """Forbidden unless the principal administers the installation (creates users, workspaces)."""
    ctx.require("members:manage")
    if not ctx.principal.can_publish_shared:
        raise Forbidden("only installation admins may manage users and workspaces")


def insert_user(
    conn: Connection, email: str, display_name: str, password: str | None, admin: bool
) -> repo.UserRow:
    """Validate and store a user; Conflict when the email (case-insensitive) is taken."""
    email = email.strip()
    if not EMAIL_RE.fullmatch(email):
        raise _bad("email", "must look like name@host")
    name = display_name.strip() or email.split("@")[0]
    if len(name) > 200:
        raise _bad("display_name", "must be at most 200 characters")
    hashed = hash_password(password) if password is not None else None
    if repo.find_user_by_email(conn, email) is not None:
        raise Conflict(f"a user with email {email!r} exists", {"email": email})
    user_id = "usr_" + random_source.token_hex(8)
    repo.insert_user(
        conn,
        user_id=user_id,
        email=email,
        display_name=name,
        password_hash=hashed,
        installation_admin=admin,
    )
    row = repo.find_user(conn, user_id)
    assert row is not None
    return row


def create_user(
    ctx: Context,
    email: str,
    display_name: str,
    password: str | None = None,
    installation_admin: bool = False,
) -> User:
    """Create a user (installation admins only).

    ``email`` is unique case-insensitively (Conflict); ``password`` ≥ 8 characters or None
    (API-key-only user). Raises InvalidInput naming the bad field.
    """
    require_installation_admin(ctx)
    with ctx.engine.begin() as conn:
        return _user(insert_user(conn, email, display_name, password, installation_admin))


def list_users(ctx: Context) -> list[User]:
    """Every user of the installation, by email (installation admins only)."""
    require_installation_admin(ctx)
    with ctx.engine.connect() as conn:
        return [_user(r) for r in repo.list_users(conn)]


def find_user(conn: Connection, user: str) -> repo.UserRow:
    """A user by email (contains ``@``) or id. Raises NotFound."""
    row = repo.find_user_by_email(conn, user) if "@" in user else repo.find_user(conn, user)
    if row is None:
        raise NotFound(f"user {user!r} not found", {"user": user})
    return row


def set_password(ctx: Context, user: str, password: str) -> User:
    """Replace a user's password (installation admins only; the CLI's way back in when an
    admin's password is lost) and end all of their sessions.

    Raises NotFound for an unknown user (email or id) and InvalidInput (path ``password``)
    under 8 characters.
    """
    require_installation_admin(ctx)
    hashed = hash_password(password)
    with ctx.engine.begin() as conn:
        row = find_user(conn, user)
        repo.set_password_hash(conn, row.id, hashed)
        repo.delete_sessions_of(conn, row.id)
    return _user(row)


def create_workspace(ctx: Context, workspace_id: str, name: str = "") -> Workspace:
    """Create a workspace (installation admins only); the creator, when a user, becomes admin.

    ``workspace_id``: 1–64 of ``[a-z0-9_-]`` starting with a letter or digit (so never
    ``_shared``). Conflict when it exists.
    """
    require_installation_admin(ctx)
    if not WORKSPACE_RE.fullmatch(workspace_id):
        raise _bad("workspace", "must be 1-64 of [a-z0-9_-], starting with a letter or digit")
    with ctx.engine.begin() as conn:
        if repo.find_workspace(conn, workspace_id) is not None:
            raise Conflict(f"workspace {workspace_id!r} exists", {"workspace": workspace_id})
        repo.insert_workspace(conn, workspace_id, name.strip() or workspace_id)
        if repo.find_user(conn, ctx.principal.user_id) is not None:
            repo.upsert_member(conn, workspace_id, ctx.principal.user_id, "admin")
        found = repo.find_workspace(conn, workspace_id)
    assert found is not None
    return Workspace(id=found[0], name=found[1], created_at=found[2])


def list_workspaces(ctx: Context) -> list[Workspace]:
    """The caller's workspaces (installation admins: every workspace but ``_shared``)."""
    ctx.require("datasets:read")
    with ctx.engine.connect() as conn:
        rows = (
            repo.list_all_workspaces(conn)
            if ctx.principal.can_publish_shared
            else repo.list_workspaces_of(conn, ctx.principal.user_id)
        )
    return [Workspace(id=i, name=n, created_at=c) for i, n, c in rows if i != SHARED_WORKSPACE]


def in_workspace(ctx: Context, workspace: str) -> Context:
    """The same principal acting in another workspace (for the local CLI admin)."""
    return replace(ctx, principal=replace(ctx.principal, workspace=workspace))


def _own_workspace(conn: Connection, ctx: Context) -> None:
    if ctx.workspace == SHARED_WORKSPACE or repo.find_workspace(conn, ctx.workspace) is None:
        raise NotFound(f"workspace {ctx.workspace!r} not found", {"workspace": ctx.workspace})


def list_members(ctx: Context) -> list[Member]:
    """Members of the caller's workspace, by email."""
    ctx.require("members:read")
    with ctx.engine.connect() as conn:
        return [_member(r) for r in repo.list_members(conn, ctx.workspace)]


def add_member(ctx: Context, user: str, role: Role = "member") -> Member:
    """Add a user (email or id) to the caller's workspace with ``role``.

    Raises NotFound for an unknown user, Conflict when already a member.
    """
    ctx.require("members:manage")
    role = _role(role)
    with ctx.engine.begin() as conn:
        _own_workspace(conn, ctx)
        row = find_user(conn, user)
        if repo.find_member(conn, ctx.workspace, row.id) is not None:
            raise Conflict(f"{row.email} is already a member", {"user": row.id})
        try:
            repo.upsert_member(conn, ctx.workspace, row.id, role)
        except IntegrityError as exc:  # a concurrent add of the same user
            raise Conflict(f"{row.email} is already a member", {"user": row.id}) from exc
        found = repo.find_member(conn, ctx.workspace, row.id)
    assert found is not None
    return _member(found)


def _load_member(conn: Connection, ctx: Context, user: str) -> repo.MemberRow:
    row = find_user(conn, user)
    found = repo.find_member(conn, ctx.workspace, row.id)
    if found is None:
        raise NotFound(f"{user!r} is not a member of {ctx.workspace}", {"user": user})
    return found


def _keep_an_admin(conn: Connection, ctx: Context, member: repo.MemberRow) -> None:
    if member.role == "admin" and repo.count_admins(conn, ctx.workspace) <= 1:
        raise Conflict(
            f"{member.email} is the last admin of {ctx.workspace}", {"user": member.user_id}
        )


def set_member_role(ctx: Context, user: str, role: Role) -> Member:
    """Change a member's role. Conflict when it would leave the workspace without an admin."""
    ctx.require("members:manage")
    role = _role(role)
    with ctx.engine.begin() as conn:
        member = _load_member(conn, ctx, user)
        if role != "admin":
            _keep_an_admin(conn, ctx, member)
        repo.upsert_member(conn, ctx.workspace, member.user_id, role)
        found = repo.find_member(conn, ctx.workspace, member.user_id)
    assert found is not None
    return _member(found)


def remove_member(ctx: Context, user: str) -> None:
    """Remove a member (their sessions in the workspace end; their keys there are revoked for
    good, so adding them again revives none).

    Conflict when they are the last admin.
    """
    ctx.require("members:manage")
    with ctx.engine.begin() as conn:
        member = _load_member(conn, ctx, user)
        _keep_an_admin(conn, ctx, member)
        repo.delete_member(conn, ctx.workspace, member.user_id)


def bootstrap_admin(engine: Engine, email: str = BOOTSTRAP_EMAIL) -> str | None:
    """On a database without users, create an installation admin who administers
    ``default`` and return their one-time generated password; otherwise return None (also
    when another server starting on the same database created it first).
    """
    password = random_source.token_urlsafe(12)
    try:
        with engine.begin() as conn:
            if repo.count_users(conn):
                return None
            row = insert_user(conn, email, "Admin", password, admin=True)
            repo.upsert_member(conn, DEFAULT_WORKSPACE, row.id, "admin")
    except (Conflict, IntegrityError):
        return None  # another server on the same database bootstrapped it at the same moment
    return password


def installation_has_users(engine: Engine) -> bool:
    """True once any user exists; until then a local server acts as the local admin
    (SPEC C: "until accounts exist, the local server acts as the admin")."""
    with engine.connect() as conn:
        return repo.count_users(conn) > 0
