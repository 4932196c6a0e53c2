"""The role → actions table (SPEC C). The only place that says who may do what."""

from __future__ import annotations

from typing import Literal

Role = Literal["viewer", "member", "admin"]

#: ``account:manage`` covers the caller's own API keys and own user secrets; ``members:read``
#: lists the workspace's members.
READ_ACTIONS = frozenset(
    {
        "datasets:read",
        "comments:read",
        "runs:read",
        "harnesses:read",
        "graders:read",
        "environments:read",
        "endpoints:read",
        "recipes:read",
        "members:read",
        "mirrors:read",
        "account:manage",
    }
)
WRITE_ACTIONS = frozenset({"datasets:write", "comments:write", "runs:write", "recipes:write"})
#: ``harnesses:write``, ``graders:write`` and ``environments:write`` are admin-only: what they
#: register is code the server executes; ``endpoints:write`` says where model calls (and the
#: secrets bound to them) may go; ``runs:report-code`` reports results under a command or
#: python harness (a member could otherwise forge an admin harness's scorecard).
#: ``runs:manage`` is acting on a run another user started (cancel, resume, retry — which
#: deletes its errored results — and its scorecards' tags); a run's starter needs only
#: ``runs:write`` (``Context.require_own``).
ADMIN_ACTIONS = frozenset(
    {
        "harnesses:write",
        "graders:write",
        "environments:write",
        "endpoints:write",
        "runs:report-code",
        "runs:manage",
        "datasets:delete",
        "secrets:read",
        "secrets:write",
        "members:manage",
        "comments:delete",
    }
)

ROLE_ACTIONS: dict[Role, frozenset[str]] = {
    "viewer": READ_ACTIONS,
    "member": READ_ACTIONS | WRITE_ACTIONS,
    "admin": READ_ACTIONS | WRITE_ACTIONS | ADMIN_ACTIONS,
}


def role_allows(role: Role, action: str) -> bool:
    """True when ``role`` grants ``action``."""
    return action in ROLE_ACTIONS[role]
