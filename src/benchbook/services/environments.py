"""Registered environment recipes (issue 27 item 2): the setup commands (and test command) a
repo case names as ``env.setup = "id@version"``.

A member-written case may not carry setup commands of its own (see
:mod:`benchbook.services.code_rules`). Registering needs ``environments:write`` (admins).
"""

from __future__ import annotations

from benchbook.contracts.registered import EnvironmentRecipe, RegisteredSummary, RegisterResult
from benchbook.datasets.versions import LATEST
from benchbook.services import registered
from benchbook.services.context import Context

ENVIRONMENT = registered.Noun(
    name="environment", model=EnvironmentRecipe, title="environment recipe"
)


def register_environment(
    ctx: Context, environment: EnvironmentRecipe, shared: bool = False
) -> RegisterResult:
    """Register an environment recipe version ``{id, version, description?, setup: [command],
    test_cmd?}``.

    Returns:
        ``{workspace, id, version, created, content_hash}``.

    Raises:
        Forbidden: without ``environments:write`` (admins), or ``shared`` without publish
            rights.
        Conflict: the version exists with different content.
    """
    return registered.register(ctx, ENVIRONMENT, environment, shared)


def list_environments(ctx: Context, search: str | None = None) -> list[RegisteredSummary]:
    """Environment recipes the caller sees: own ids plus ``_shared`` ones not shadowed."""
    return registered.list_items(ctx, ENVIRONMENT, search)


def get_environment(ctx: Context, environment_id: str, version: str = LATEST) -> EnvironmentRecipe:
    """One environment recipe version (exact SemVer or ``latest``). Raises NotFound."""
    return registered.get(ctx, ENVIRONMENT, environment_id, version)


def delete_environment_version(ctx: Context, environment_id: str, version: str) -> RegisterResult:
    """Tombstone one exact version of your workspace.

    Raises:
        Forbidden: without ``environments:write``. NotFound: no such live version here.
    """
    return registered.delete_version(ctx, ENVIRONMENT, environment_id, version)
