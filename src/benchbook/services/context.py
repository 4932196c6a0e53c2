"""Principal and Context: who is asking, and the handles a service needs."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import Engine

from benchbook.errors import Forbidden
from benchbook.services.authz import Role, role_allows
from benchbook.settings import Settings, get_settings
from benchbook.store.engine import make_engine, migrate
from benchbook.store.tables import DEFAULT_WORKSPACE, SHARED_WORKSPACE

LOCAL_ADMIN = "local-admin"


@dataclass(frozen=True)
class Principal:
    """An authenticated caller acting in one workspace with one role.

    ``can_publish_shared`` marks installation admins who may write into ``_shared``.
    """

    user_id: str
    display_name: str
    workspace: str
    role: Role
    can_publish_shared: bool = False


@dataclass
class Context:
    """A principal plus the engine and settings; passed first to every service function."""

    principal: Principal
    engine: Engine
    settings: Settings = field(default_factory=get_settings)

    @property
    def workspace(self) -> str:
        """The workspace the principal acts in."""
        return self.principal.workspace

    def require(self, action: str) -> None:
        """Raise Forbidden unless the principal's role grants ``action``."""
        if not role_allows(self.principal.role, action):
            raise Forbidden(
                f"role {self.principal.role!r} may not {action}",
                {"action": action, "role": self.principal.role},
            )

    def require_own(self, owner: str, action: str, what: str) -> None:
        """Raise Forbidden unless the principal is ``owner`` (a user id) or its role grants
        ``action`` over other users' things; ``what`` names the thing in the message
        (``"run run_…"``)."""
        if not self.allows_own(owner, action):
            raise Forbidden(
                f"{what} belongs to another user; only they or an admin may change it",
                {"action": action, "role": self.principal.role, "owner": owner},
            )

    def allows_own(self, owner: str, action: str) -> bool:
        """True when the principal is ``owner`` or its role grants ``action`` (for buttons)."""
        return owner == self.principal.user_id or role_allows(self.principal.role, action)

    def allows(self, action: str) -> bool:
        """True when the principal's role grants ``action`` (for showing buttons)."""
        return role_allows(self.principal.role, action)

    def target_workspace(self, shared: bool) -> str:
        """The workspace a write goes to: own, or ``_shared`` for installation admins."""
        if not shared:
            return self.workspace
        if not self.principal.can_publish_shared:
            raise Forbidden("only installation admins may publish into _shared")
        return SHARED_WORKSPACE


def open_engine(settings: Settings | None = None) -> Engine:
    """Create the engine for the configured database and migrate it to head."""
    settings = settings or get_settings()
    engine = make_engine(settings.resolved_database_url(), settings.sqlite_busy_timeout_s)
    migrate(engine)
    return engine


def local_admin_context(engine: Engine, settings: Settings | None = None) -> Context:
    """The CLI's and local server's principal: admin of ``default`` who may publish shared."""
    return Context(
        principal=Principal(
            user_id=LOCAL_ADMIN,
            display_name="Local admin",
            workspace=DEFAULT_WORKSPACE,
            role="admin",
            can_publish_shared=True,
        ),
        engine=engine,
        settings=settings or get_settings(),
    )
