"""The installation's sandbox (``docs/security.md``): the policy from the settings and the
check that a run may start under it.

``BENCHBOOK_SANDBOX=off`` exists for a single-user install only: with more than one user, a
user who is not an installation admin, or more than one workspace, a run does not start and
``benchbook serve``/``worker`` refuse to start — a member's harness or grader would otherwise
run with the server's identity. With the
sandbox on, a missing bubblewrap refuses the same way (fail closed, never a silent fallback).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from sqlalchemy import Engine

from benchbook.errors import Conflict
from benchbook.runtime.sandbox import SandboxLimits, SandboxPolicy, SandboxUnavailable
from benchbook.settings import Settings
from benchbook.store import accounts as accounts_repo


def server_files(settings: Settings) -> tuple[Path, ...]:
    """What no sandbox may see, whoever registered the code: the data directory
    ``settings.home`` (database, ``secret.key``, mirrors, traces), a SQLite database kept
    elsewhere (with its journal files) and the pricing file."""
    paths = [settings.home]
    url = settings.resolved_database_url()
    if url.startswith("sqlite:///") and url != "sqlite:///:memory:":
        database = Path(url.removeprefix("sqlite:///").split("?", 1)[0])
        paths += [database.with_name(database.name + s) for s in ("", "-wal", "-shm", "-journal")]
    if settings.pricing_file is not None:
        paths.append(settings.pricing_file)
    return tuple(paths)


def sandbox_policy(settings: Settings, work_root: Path | None = None) -> SandboxPolicy:
    """The :class:`SandboxPolicy` the settings describe (``0`` limits are unlimited); the
    server's own files (:func:`server_files`) are always denied, except ``work_root`` (the
    per-case directories) when an installation keeps it in the data directory."""

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
        denied_paths=server_files(settings),
        allowed_inside=(work_root,) if work_root is not None else (),
    )


def default_work_root(settings: Settings) -> Path:
    """``BENCHBOOK_WORK_ROOT``, default ``<tmp>/benchbook-work``."""
    return settings.work_root or Path(tempfile.gettempdir()) / "benchbook-work"


def check_sandbox(engine: Engine, settings: Settings) -> None:
    """Refuse to execute case processes under this installation's sandbox setting.

    Raises:
        Conflict: ``BENCHBOOK_SANDBOX=off`` while the installation has more than one user or
            workspace, or its one user is not an installation admin (details: ``users``,
            ``non_admin_users``, ``workspaces``); the sandbox is on and
            ``BENCHBOOK_SANDBOX_RO_PATHS`` names a path holding or inside ``home`` (details:
            ``setting``, ``path``); or the sandbox is on and
            bubblewrap/prlimit is not installed (details: ``requirement``, ``path``).
    """
    policy = sandbox_policy(settings, default_work_root(settings))
    if policy.enabled:
        try:
            policy.check_available()
        except SandboxUnavailable as exc:
            raise Conflict(exc.message, exc.details) from None
        for path in policy.ro_paths:
            if not policy.may_bind(path):
                raise Conflict(
                    f"BENCHBOOK_SANDBOX_RO_PATHS lists {path}, which holds or lies in Benchbook's"
                    f" data directory {settings.home} (database, secret.key) or another of the"
                    " server's own files (a SQLite database, the pricing file): no sandbox may see"
                    " it, so no case could start — remove it from the setting (docs/security.md)",
                    {"setting": "BENCHBOOK_SANDBOX_RO_PATHS", "path": str(path)},
                )
        return
    with engine.connect() as conn:
        users = accounts_repo.count_users(conn)
        non_admins = accounts_repo.count_non_admin_users(conn)
        workspaces = accounts_repo.count_workspaces(conn)
    details = {
        "setting": "BENCHBOOK_SANDBOX",
        "users": users,
        "non_admin_users": non_admins,
        "workspaces": workspaces,
    }
    if users > 1 or workspaces > 1:
        raise Conflict(
            f"BENCHBOOK_SANDBOX=off is refused: this installation has {users} users and "
            f"{workspaces} workspaces, and the setting is only for a single-user install — "
            "turn the sandbox back on (docs/security.md)",
            details,
        )
    if non_admins:
        raise Conflict(
            "BENCHBOOK_SANDBOX=off is refused: this installation's only user is not an "
            "installation admin, and the setting is only for a single-user install run by its "
            "admin — a member's code would run as the server's user; turn the sandbox back on "
            "(docs/security.md)",
            details,
        )
