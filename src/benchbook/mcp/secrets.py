"""Guidance for the secret tools (SPEC C): write-only credentials such as ``HF_TOKEN``."""

from __future__ import annotations

from benchbook.mcp.guide import ToolGuide

NAME = "The secret's name, e.g. 'HF_TOKEN'."
SCOPE = "'user' (your own; wins over the workspace's) or 'workspace' (admins only)."

GUIDES: dict[str, ToolGuide] = {
    "set_secret": ToolGuide(
        advice=(
            "Values are encrypted at rest and never returned by any tool. Imports use your own "
            "secret first, then the workspace's (e.g. HF_TOKEN for gated Hugging Face datasets)."
        ),
        parameters={
            "name": NAME,
            "value": "The secret value, 1 byte to 64 KiB.",
            "scope": SCOPE,
            "hosts": "Model endpoint hosts it may be sent to (api.example.org, host:port); "
            "none: never sent to a model endpoint.",
        },
        destructive=True,
        idempotent=True,
    ),
    "list_secrets": ToolGuide(
        advice="Names and update times only, never values.",
        parameters={"scope": "Narrow to 'user' or 'workspace'; omit for every scope you may read."},
        read_only=True,
    ),
    "delete_secret": ToolGuide(parameters={"name": NAME, "scope": SCOPE}, destructive=True),
}
"""Operation name → guide, for ``services/secrets.py``."""
