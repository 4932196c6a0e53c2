"""Guidance for the registered grader, environment recipe and endpoint tools (issue 27)."""

from __future__ import annotations

from benchbook.mcp.guide import ToolGuide

ITEM_ID = "The id: 1-128 of [A-Za-z0-9._-], starting with a letter or digit."
SHARED = "Publish into the installation-wide _shared tier (installation admins)."

GUIDES: dict[str, ToolGuide] = {
    "register_grader": ToolGuide(
        advice=(
            "Admins only: a registered grader is a command the server runs in a case's "
            "workspace. Members name it from a plan or a case as {id: command|tests-pass, "
            "config: {grader: 'id@version'}}; an inline cmd/argv from a member is refused."
        ),
        parameters={
            "grader": "{id, version, description?, kind: command, config: {cmd | "
            "argv, pass_pattern?, timeout_s?}}.",
            "shared": SHARED,
        },
        idempotent=True,
    ),
    "list_graders": ToolGuide(
        parameters={"search": "Case-insensitive substring of the id or description."},
        read_only=True,
    ),
    "get_grader": ToolGuide(
        parameters={"grader_id": ITEM_ID, "version": "An exact SemVer or 'latest'."},
        read_only=True,
    ),
    "delete_grader_version": ToolGuide(
        parameters={"grader_id": ITEM_ID, "version": "An exact SemVer version."},
        destructive=True,
    ),
    "register_environment": ToolGuide(
        advice=(
            "Admins only: setup commands (and a test_cmd for tests-pass) a repo case names as "
            "env.setup = 'id@version'. A member-written case's own setup list is refused."
        ),
        parameters={
            "environment": "{id, version, description?, setup: [command], test_cmd?}.",
            "shared": SHARED,
        },
        idempotent=True,
    ),
    "list_environments": ToolGuide(
        parameters={"search": "Case-insensitive substring of the id or description."},
        read_only=True,
    ),
    "get_environment": ToolGuide(
        parameters={"environment_id": ITEM_ID, "version": "An exact SemVer or 'latest'."},
        read_only=True,
    ),
    "delete_environment_version": ToolGuide(
        parameters={"environment_id": ITEM_ID, "version": "An exact SemVer version."},
        destructive=True,
    ),
    "add_endpoint": ToolGuide(
        advice=(
            "Admins only. A judge's or openai harness's base_url must be this URL or below "
            "it; secrets go only to the hosts they are bound to (set_secret hosts)."
        ),
        parameters={"name": "A short name.", "url": "http(s) API root.", "shared": SHARED},
    ),
    "list_endpoints": ToolGuide(read_only=True),
    "remove_endpoint": ToolGuide(
        parameters={"name": "The endpoint's name.", "shared": SHARED}, destructive=True
    ),
}
"""Operation name → guide, for ``services/graders.py``, ``environments.py``, ``endpoints.py``."""
