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
        "recipes:read",
        "members:read",
        "mirrors:read",
        "account:manage",
    }
)
WRITE_ACTIONS = frozenset({"datasets:write", "comments:write", "runs:write", "recipes:write"})
#: ``harnesses:write`` is admin-only: registering a harness is code execution on the server.
#: ``runs:manage`` is acting on a run another user started (cancel, resume, retry — which
#: deletes its errored results — and its scorecards' tags); a run's starter needs only
#: ``runs:write`` (``Context.require_own``).
ADMIN_ACTIONS = frozenset(
    {
        "harnesses:write",
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
