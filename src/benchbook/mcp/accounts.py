"""Guidance for the account tools (SPEC C): users, workspaces, members and API keys."""

from __future__ import annotations

from benchbook.mcp.guide import ToolGuide

USER = "A user's email or id."
ROLE = "'viewer' (read), 'member' (read + write) or 'admin' (everything in the workspace)."

GUIDES: dict[str, ToolGuide] = {
    "create_api_key": ToolGuide(
        advice=(
            "The returned key (bb_…) is shown ONCE; store it. A key's rights are the lower of "
            "its scope and its owner's role."
        ),
        parameters={
            "name": "What the key is for, 1-100 characters.",
            "scope": "'read', 'write' or 'admin' (at most the owner's role).",
            "user": "The owner (admins only); omit for yourself.",
        },
    ),
    "list_api_keys": ToolGuide(
        advice="Key metadata (prefix, scope, last use), never the keys.",
        parameters={"all_users": "Every member's keys (admins only) instead of your own."},
        read_only=True,
    ),
    "revoke_api_key": ToolGuide(
        advice="The key's next request is refused (unauthenticated).",
        parameters={"key_id": "The key's id from list_api_keys."},
        destructive=True,
        idempotent=True,
    ),
    "list_members": ToolGuide(read_only=True),
    "add_member": ToolGuide(parameters={"user": USER, "role": ROLE}, idempotent=True),
    "set_member_role": ToolGuide(
        advice="A workspace always keeps at least one admin (conflict otherwise).",
        parameters={"user": USER, "role": ROLE},
        idempotent=True,
    ),
    "remove_member": ToolGuide(parameters={"user": USER}, destructive=True),
    "create_user": ToolGuide(
        advice="Installation admins only. A user without a password signs in with API keys.",
        parameters={
            "email": "Unique, case-insensitively.",
            "display_name": "The name shown to people.",
            "password": "At least 8 characters; omit for an API-key-only user.",
            "installation_admin": "May create users and workspaces and publish into _shared.",
        },
    ),
    "list_users": ToolGuide(read_only=True),
    "create_workspace": ToolGuide(
        advice="Installation admins only; the creator becomes the workspace's admin.",
        parameters={
            "workspace_id": "1-64 of [a-z0-9_-], starting with a letter or digit.",
            "name": "A display name (default: the id).",
        },
    ),
    "list_workspaces": ToolGuide(read_only=True),
}
"""Operation name → guide, for ``services/accounts.py`` and ``services/keys.py``."""
