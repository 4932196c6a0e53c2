"""The installation's sandbox (``docs/security.md``): the policy from the settings and the
check that a run may start under it.

``BENCHBOOK_SANDBOX=off`` exists for a single-user install only: with more than one user or
more than one workspace, a run does not start and ``benchbook serve``/``worker`` refuse to
start — a member's harness or grader would otherwise run with the server's identity. With the
sandbox on, a missing bubblewrap refuses the same way (fail closed, never a silent fallback).
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine

from benchbook.errors import Conflict
from benchbook.runtime.sandbox import SandboxLimits, SandboxPolicy, SandboxUnavailable
from benchbook.settings import Settings
from benchbook.store import accounts as accounts_repo


def sandbox_policy(settings: Settings, work_root: Path | None = None) -> SandboxPolicy:
    """The :class:`SandboxPolicy` the settings describe (``0`` limits are unlimited); the
    data directory ``settings.home`` is always denied, except ``work_root`` (the per-case
    directories) when an installation keeps it there."""

    def limit(value: int, scale: int = 1) -> int | None:
        return value * scale if value > 0 else None

    return SandboxPolicy(
        enabled=settings.sandbox,
        bwrap=settings.bwrap,
        limits=SandboxLimits(
            cpu_s=limit(settings.sandbox_cpu_s),
            address_space_bytes=limit(settings.sandbox_memory_mb, 1 << 20),
            processes=limit(settings.sandbox_processes),
            file_size_bytes=limit(settings.sandbox_file_size_mb, 1 << 20),
        ),
        ro_paths=tuple(settings.sandbox_ro_paths),
        denied_paths=(settings.home,),
        allowed_inside=(work_root,) if work_root is not None else (),
    )


def check_sandbox(engine: Engine, settings: Settings) -> None:
    """Refuse to execute case processes under this installation's sandbox setting.

    Raises:
        Conflict: ``BENCHBOOK_SANDBOX=off`` while the installation has more than one user or
            workspace (details: ``users``, ``workspaces``); or the sandbox is on and
            bubblewrap/prlimit is not installed (details: ``requirement``, ``path``).
    """
    policy = sandbox_policy(settings)
    if policy.enabled:
        try:
            policy.check_available()
        except SandboxUnavailable as exc:
            raise Conflict(exc.message, exc.details) from None
        return
    with engine.connect() as conn:
        users = accounts_repo.count_users(conn)
        workspaces = accounts_repo.count_workspaces(conn)
    if users > 1 or workspaces > 1:
        raise Conflict(
            f"BENCHBOOK_SANDBOX=off is refused: this installation has {users} users and "
            f"{workspaces} workspaces, and the setting is only for a single-user install — "
            "turn the sandbox back on (docs/security.md)",
            {"setting": "BENCHBOOK_SANDBOX", "users": users, "workspaces": workspaces},
        )
