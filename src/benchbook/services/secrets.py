"""Secrets (SPEC C): user- and workspace-scoped values, encrypted at rest, write-only.

Values are encrypted with Fernet (AES-128-CBC + HMAC-SHA256, from ``cryptography``) under a
key derived by HKDF-SHA256 from ``settings.secret_key``; when that is unset a random key is
generated once into ``<home>/secret.key`` (mode 0600) and reused. No function here returns a
stored value except :func:`resolve_secret`, which is for the services' own use (the importer's
``HF_TOKEN``) and is exposed by no transport.
"""

from __future__ import annotations

import base64
import json
import os
import re
import secrets as random_source
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Engine

from benchbook.contracts.accounts import SecretInfo, SecretScope
from benchbook.errors import Conflict, InvalidInput, NotFound
from benchbook.services.context import Context
from benchbook.settings import Settings
from benchbook.store import secrets as repo

if TYPE_CHECKING:
    from cryptography.fernet import Fernet

NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,127}$")
#: A bound host: a DNS name or IPv4 address, optionally ``:port`` (lower-cased when stored).
HOST_RE = re.compile(
    r"^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?\.)*[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}"
    r"[A-Za-z0-9])?(?::[0-9]{1,5})?$"
)
MAX_HOSTS = 32
MAX_VALUE_BYTES = 64 * 1024
KEY_FILE = "secret.key"


def installation_key(settings: Settings) -> str:
    """``settings.secret_key``, else the key in ``<home>/secret.key`` (created on first use)."""
    if settings.secret_key:
        return settings.secret_key
    path = Path(settings.home) / KEY_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(fd, "w") as out:
        key = random_source.token_urlsafe(32)
        out.write(key + "\n")
    return key


def derive_key(settings: Settings, purpose: str) -> bytes:
    """32 bytes for one ``purpose`` (``secrets``, ``csrf`` …) from the installation key."""
    from cryptography.hazmat.primitives import hashes  # imported on use: ~0.05 s of start-up
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=purpose.encode())
    return hkdf.derive(installation_key(settings).encode())


def _cipher(settings: Settings) -> Fernet:
    from cryptography.fernet import Fernet

    return Fernet(base64.urlsafe_b64encode(derive_key(settings, "benchbook secrets")))


def _owner(ctx: Context, scope: SecretScope, write: bool) -> str:
    """Gate by scope and return the owner key: own user id, or the workspace (admin)."""
    if scope == "user":
        ctx.require("account:manage")
        return ctx.principal.user_id
    ctx.require("secrets:write" if write else "secrets:read")
    return ctx.workspace


def _check_name(name: str) -> str:
    if not NAME_RE.fullmatch(name):
        raise InvalidInput(
            "secret name must be 1-128 characters of [A-Za-z0-9_.-], starting with a letter or _",
            {"errors": [{"path": "name", "message": "invalid secret name"}]},
        )
    return name


def _check_hosts(hosts: list[str]) -> list[str]:
    """Lower-cased, de-duplicated, sorted hosts. Raises InvalidInput naming ``hosts.N``."""
    if len(hosts) > MAX_HOSTS:
        raise InvalidInput(
            f"hosts: at most {MAX_HOSTS}", {"errors": [{"path": "hosts", "message": "too many"}]}
        )
    out: set[str] = set()
    for i, host in enumerate(hosts):
        folded = host.lower()
        if not HOST_RE.fullmatch(host):
            raise InvalidInput(
                f"hosts.{i}: {host!r} is not a host name (api.example.org, 127.0.0.1:8000)",
                {"errors": [{"path": f"hosts.{i}", "message": "not a host name"}]},
            )
        out.add(folded)
    return sorted(out)


def set_secret(
    ctx: Context,
    name: str,
    value: str,
    scope: SecretScope = "user",
    hosts: list[str] | None = None,
) -> SecretInfo:
    """Create or replace a secret. Returns its metadata, never the value.

    ``user`` scope: the caller's own (any member); ``workspace`` scope: ``secrets:write`` (admin).
    ``hosts`` are the model endpoint hosts (``api.example.org`` — any port — or
    ``host:port``) the value may be sent to as an API key; none (the default) means a judge or
    an ``openai`` harness never sends it anywhere. Setting a secret again replaces its hosts.
    Raises InvalidInput for a bad name, a bad host or an empty or over-64-KiB value.
    """
    owner = _owner(ctx, scope, write=True)
    _check_name(name)
    bound = _check_hosts(hosts or [])
    raw = value.encode()
    if not value or len(raw) > MAX_VALUE_BYTES:
        raise InvalidInput(
            f"secret value must be 1-{MAX_VALUE_BYTES} bytes",
            {"errors": [{"path": "value", "message": "empty or too long"}]},
        )
    ciphertext = _cipher(ctx.settings).encrypt(raw).decode()
    with ctx.engine.begin() as conn:
        repo.put_secret(
            conn, scope, owner, name, ciphertext, ctx.principal.user_id, json.dumps(bound)
        )
        row = next(r for r in repo.list_secrets(conn, scope, owner) if r.name == name)
    return _info(row, scope)


def _info(row: repo.SecretRow, scope: SecretScope) -> SecretInfo:
    return SecretInfo(
        name=row.name,
        scope=scope,
        updated_by=row.updated_by,
        updated_at=row.updated_at,
        hosts=json.loads(row.hosts),
    )


def list_secrets(ctx: Context, scope: SecretScope | None = None) -> list[SecretInfo]:
    """Names of the caller's own secrets and, for admins, the workspace's; never values.

    ``scope`` narrows to one scope; ``workspace`` needs ``secrets:read`` (admin).
    """
    scopes: list[SecretScope] = [scope] if scope else ["user", "workspace"]
    if scope is None and not ctx.allows("secrets:read"):
        scopes = ["user"]
    out: list[SecretInfo] = []
    with ctx.engine.connect() as conn:
        for s in scopes:
            owner = _owner(ctx, s, write=False)
            out.extend(_info(r, s) for r in repo.list_secrets(conn, s, owner))
    return out


def delete_secret(ctx: Context, name: str, scope: SecretScope = "user") -> None:
    """Delete a secret. Raises NotFound when the scope holds no secret of that name."""
    owner = _owner(ctx, scope, write=True)
    with ctx.engine.begin() as conn:
        if not repo.delete_secret(conn, scope, owner, name):
            raise NotFound(f"{scope} secret {name!r} not found", {"name": name, "scope": scope})


def resolve_secret(ctx: Context, name: str) -> str | None:
    """The value of ``name`` for the caller, requester first: own user secret, else the
    workspace's, else None (callers apply environment fallbacks such as ``HF_TOKEN``).

    Internal: no transport exposes it. Raises Conflict (409) when a stored value cannot be
    decrypted (the installation key changed), saying to set it again.
    """
    ctx.require("account:manage")
    cipher = _cipher(ctx.settings)
    with ctx.engine.connect() as conn:
        for scope, owner in (("user", ctx.principal.user_id), ("workspace", ctx.workspace)):
            token = repo.get_ciphertext(conn, scope, owner, name)
            if token is None:
                continue
            return _decrypt(cipher, token, scope, name)
    return None


def _decrypt(cipher: Fernet, token: str, scope: str, name: str) -> str:
    """The plain value. Raises Conflict when the installation key changed since it was set."""
    from cryptography.fernet import InvalidToken

    try:
        return cipher.decrypt(token.encode()).decode()
    except InvalidToken as exc:
        raise Conflict(
            f"{scope} secret {name!r} cannot be decrypted: the installation key changed;"
            " set it again (or restore the old BENCHBOOK_SECRET_KEY / home/secret.key)",
            {"name": name, "scope": scope},
        ) from exc


def secret_values_for(
    engine: Engine, settings: Settings, user_id: str, workspace: str, names: Iterable[str]
) -> dict[str, str]:
    """Values of ``names`` for ``user_id`` acting in ``workspace``, requester first (the user's
    own secret, else the workspace's); names with neither are left out.

    Internal (no transport exposes it): a run's executor resolves its harness's and judges'
    secrets for the run's creator, whose right to start the run was checked by ``start_run``.
    """
    found = secret_records_for(engine, settings, user_id, workspace, names)
    return {name: value for name, (value, _) in found.items()}


def secret_records_for(
    engine: Engine, settings: Settings, user_id: str, workspace: str, names: Iterable[str]
) -> dict[str, tuple[str, list[str]]]:
    """:func:`secret_values_for` with each value's bound hosts: ``{name: (value, hosts)}``."""
    cipher = _cipher(settings)
    out: dict[str, tuple[str, list[str]]] = {}
    with engine.connect() as conn:
        for name in names:
            for scope, owner in (("user", user_id), ("workspace", workspace)):
                found = repo.get_record(conn, scope, owner, name)
                if found is None:
                    continue
                out[name] = (_decrypt(cipher, found[0], scope, name), json.loads(found[1]))
                break
    return out
