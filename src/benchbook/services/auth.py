"""Authentication: email + password, API keys and login sessions → one ``Principal``.

Transports call these and never authorize; the returned principal's role is the membership role
(for a key: ``min(scope, membership role)``). Every failure is ``Unauthenticated`` with the same
message, so a caller cannot tell an unknown email from a wrong password or a revoked key.
Sessions are random 256-bit tokens stored as SHA-256 (a server-side session, so logout and
member removal end it at once); CSRF tokens are HMAC-SHA256 of the session token.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets as random_source
import threading
from datetime import timedelta

from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import Connection, Engine

from benchbook.errors import Unauthenticated
from benchbook.services.accounts import PASSWORDS
from benchbook.services.authz import Role
from benchbook.services.context import Principal
from benchbook.services.keys import KEY_PREFIX, effective_role, key_hash
from benchbook.services.secrets import derive_key
from benchbook.services.throttle import LoginThrottle
from benchbook.settings import Settings
from benchbook.store import accounts as repo
from benchbook.store.engine import try_write
from benchbook.store.tables import DEFAULT_WORKSPACE, utcnow

SESSION_PREFIX = "bbs_"
SESSION_TTL = timedelta(days=14)
KEY_TOUCH_INTERVAL = timedelta(seconds=60)
# A real argon2 hash checked when the email is unknown, so both paths cost the same time.
_DUMMY_HASH = PASSWORDS.hash("benchbook-timing-equalizer")
PASSWORD_CHECKS_AT_ONCE = max(2, os.cpu_count() or 2)
"""Concurrent argon2 checks allowed (one per core): more only add memory (64 MiB each), not
speed; the others wait in their thread without holding a database connection."""
_PASSWORD_CHECKS = threading.BoundedSemaphore(PASSWORD_CHECKS_AT_ONCE)


def _principal(user: repo.UserRow, workspace: str, role: Role) -> Principal:
    return Principal(
        user_id=user.id,
        display_name=user.display_name,
        workspace=workspace,
        role=role,
        can_publish_shared=user.installation_admin,
    )


def _membership(conn: Connection, user_id: str, workspace: str | None) -> repo.MemberRow:
    """The membership to act in: ``workspace``, else ``default``, else the first by id."""
    if workspace is not None:
        found = repo.find_member(conn, workspace, user_id)
    else:
        found = repo.find_member(conn, DEFAULT_WORKSPACE, user_id)
        if found is None:
            ids = [w[0] for w in repo.list_workspaces_of(conn, user_id)]
            found = repo.find_member(conn, ids[0], user_id) if ids else None
    if found is None:
        raise Unauthenticated("no membership in that workspace")
    return found


def _role(value: str) -> Role:
    return effective_role("admin", value)


def authenticate_password(
    engine: Engine,
    email: str,
    password: str,
    workspace: str | None = None,
    *,
    throttle: LoginThrottle | None = None,
    client: str | None = None,
    device: str | None = None,
) -> Principal:
    """The principal for an email + password in ``workspace`` (default: ``default`` or the
    user's first workspace).

    Args:
        throttle: counts the attempt for ``email`` and ``client`` (an address) before any
            hashing; None skips throttling (the CLI, tests of the hashing itself).
        client: the caller's network address, as the transport saw it.
        device: the nonce of the caller's valid device cookie for ``email``
            (``login_devices.trusted_device``): counted on its own, not locked out by the
            account's failures from other clients.

    Raises:
        TooManyRequests: too many failed logins for the account or the address (429).
        Unauthenticated: any mismatch or no membership.
    """
    trusted = throttle.begin(email, client, device) if throttle is not None else False
    principal = _check_password(engine, email, password, workspace)
    if throttle is not None:
        throttle.succeeded(email, client, device if trusted else None)
    return principal


def _check_password(engine: Engine, email: str, password: str, workspace: str | None) -> Principal:
    """Read the hash, give the connection back, verify, then read the membership: argon2
    (~50 ms of CPU, 64 MiB) never holds a pooled connection, and at most
    :data:`PASSWORD_CHECKS_AT_ONCE` run at once (issue 27: 50 concurrent wrong logins held
    every connection and the rest of the server answered 500)."""
    bad = Unauthenticated("invalid email or password")
    with engine.connect() as conn:  # a read: never waits for SQLite's writer
        user = repo.find_user_by_email(conn, email)
    stored = user.password_hash if user is not None else None
    with _PASSWORD_CHECKS:
        try:
            PASSWORDS.verify(stored or _DUMMY_HASH, password)
        except (VerificationError, InvalidHashError) as exc:
            raise bad from exc
        rehashed = (
            PASSWORDS.hash(password) if stored and PASSWORDS.check_needs_rehash(stored) else None
        )
    if user is None or stored is None:
        raise bad
    with engine.begin() as conn:
        if rehashed is not None:
            repo.set_password_hash(conn, user.id, rehashed)
        member = _membership(conn, user.id, workspace)
        return _principal(user, member.workspace, _role(member.role))


def authenticate_api_key(engine: Engine, key: str) -> Principal:
    """The principal for an API key (``bb_…``); records its last use (at most once a minute,
    and only when the database can take the write at once: a read never waits for it).

    Raises Unauthenticated when the key is malformed, unknown, revoked, or its owner is no
    longer a member of the key's workspace.
    """
    bad = Unauthenticated("invalid or revoked API key")
    if not key.startswith(KEY_PREFIX) or len(key) > 200:
        raise bad
    # One statement (key, user, role) outside a transaction: on PostgreSQL one round trip,
    # not BEGIN, SELECT and ROLLBACK. A read: never waits for SQLite's writer.
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        found = repo.find_key_holder(conn, key_hash(key))
    if found is None or found.key.revoked_at is not None or found.member_role is None:
        raise bad
    row = found.key
    now = utcnow()
    if row.last_used_at is None or now - row.last_used_at >= KEY_TOUCH_INTERVAL:
        # Bookkeeping: skipped (retried on a later request) while a long import holds SQLite.
        try_write(engine, lambda conn: repo.touch_key(conn, row.id, now))
    return _principal(found.user, row.workspace, effective_role(row.scope, found.member_role))


def start_session(engine: Engine, principal: Principal, ttl: timedelta = SESSION_TTL) -> str:
    """A new session token for an authenticated user (the cookie value; shown once)."""
    token = SESSION_PREFIX + random_source.token_urlsafe(32)
    with engine.begin() as conn:
        repo.insert_session(
            conn, key_hash(token), principal.user_id, principal.workspace, utcnow() + ttl
        )
    return token


def authenticate_session(engine: Engine, token: str) -> Principal:
    """The principal of a live session. Raises Unauthenticated when unknown, expired or the
    user left the workspace."""
    bad = Unauthenticated("session expired or invalid; log in again")
    if not token.startswith(SESSION_PREFIX) or len(token) > 200:
        raise bad
    with engine.connect() as conn:  # a read: never waits for SQLite's writer
        row = repo.find_session(conn, key_hash(token))
        if row is None:
            raise bad
        if row.expires_at <= utcnow():
            conn.rollback()
            # Forgetting the expired row is bookkeeping: skipped while the writer is busy.
            try_write(engine, lambda c: repo.delete_session(c, key_hash(token)))
            raise bad
        user = repo.find_user(conn, row.user_id)
        member = repo.find_member(conn, row.workspace, row.user_id)
        if user is None or member is None:
            raise bad
        return _principal(user, row.workspace, _role(member.role))


def end_session(engine: Engine, token: str) -> None:
    """Log out: the token stops working. Unknown tokens are ignored."""
    with engine.begin() as conn:
        repo.delete_session(conn, key_hash(token))


def csrf_token(settings: Settings, session_token: str) -> str:
    """The CSRF token bound to a session (HMAC-SHA256 under a key derived for CSRF)."""
    mac = hmac.new(derive_key(settings, "benchbook csrf"), session_token.encode(), hashlib.sha256)
    return mac.hexdigest()


def check_csrf(settings: Settings, session_token: str, presented: str) -> bool:
    """True when ``presented`` is the session's CSRF token (constant-time compare)."""
    return hmac.compare_digest(csrf_token(settings, session_token), presented)
