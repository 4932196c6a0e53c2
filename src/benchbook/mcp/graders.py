"""Guidance for the registered grader, environment recipe and endpoint tools (issue 27)."""

from __future__ import annotations

from benchbook.mcp.guide import ToolGuide
from benchbook.mcp.registered import id_text, noun_guides
from benchbook.transports import nouns

SHARED = "Publish into the installation-wide _shared tier (installation admins)."

GUIDES: dict[str, ToolGuide] = {
    **noun_guides(
        nouns.GRADERS,
        ToolGuide(
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
        id_text(),
    ),
    **noun_guides(
        nouns.ENVIRONMENTS,
        ToolGuide(
            advice=(
                "Admins only: setup commands (and a test_cmd for tests-pass) a repo case names "
                "as env.setup = 'id@version'. A member-written case's own setup list is refused."
            ),
            parameters={
                "environment": "{id, version, description?, setup: [command], test_cmd?}.",
                "shared": SHARED,
            },
            idempotent=True,
        ),
        id_text(),
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
