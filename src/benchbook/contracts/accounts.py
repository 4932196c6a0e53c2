"""Accounts and tenancy shapes (SPEC C): users, workspaces, members, API keys, secrets.

None of these ever carries a password, a password hash, a key hash or a secret value. The only
shape holding a plain API key is :class:`CreatedApiKey`, returned once by ``create_api_key``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from benchbook.contracts.common import LAZY

Role = Literal["viewer", "member", "admin"]
"""A member's role in one workspace (SPEC C)."""

KeyScope = Literal["read", "write", "admin"]
"""An API key's scope; its effective role is ``min(scope, membership role)``."""

SecretScope = Literal["user", "workspace"]
"""``user``: the caller's own secret (every workspace); ``workspace``: shared by its members."""


class User(BaseModel):
    """A person who can log in. ``installation_admin`` may publish into ``_shared``."""

    model_config = LAZY

    id: str
    email: str
    display_name: str
    installation_admin: bool = False
    created_at: datetime


class Workspace(BaseModel):
    """A tenant: its datasets, comments, secrets and members are private to it."""

    model_config = LAZY

    id: str
    name: str
    created_at: datetime


class Member(BaseModel):
    """One user's membership in one workspace."""

    model_config = LAZY

    workspace: str
    user_id: str
    email: str
    display_name: str
    role: Role
    created_at: datetime


class ApiKeyInfo(BaseModel):
    """A stored API key without its secret part; ``prefix`` is the key's first characters."""

    model_config = LAZY

    id: str
    name: str
    prefix: str
    workspace: str
    user_id: str
    scope: KeyScope
    created_by: str
    created_at: datetime
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None


class CreatedApiKey(BaseModel):
    """A new key: ``key`` (``bb_…``) is shown this once and never stored in plain text."""

    model_config = LAZY

    key: str
    info: ApiKeyInfo


class SecretInfo(BaseModel):
    """A stored secret's name and scope. The value is write-only and never returned."""

    model_config = LAZY

    name: str
    scope: SecretScope
    updated_by: str
    updated_at: datetime
    hosts: list[str] = Field(default_factory=list)
    """The endpoint hosts the value may be sent to (``[]``: none — model calls refuse it)."""
