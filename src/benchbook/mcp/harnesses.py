"""Guidance for the harness tools (SPEC H.1): the agents under evaluation, versioned."""

from __future__ import annotations

from benchbook.mcp.guide import ToolGuide

HARNESS_ID = "The harness id: 1-128 of [A-Za-z0-9._-], starting with a letter or digit."

GUIDES: dict[str, ToolGuide] = {
    "register_harness": ToolGuide(
        advice=(
            "Admins only: a command or python harness is code the server will execute. "
            "Harnesses are immutable like datasets: change the config by registering a NEW "
            "version; identical content again is a no-op (created: false). Kinds: command "
            "{argv, env, secrets, answer: stdout|file, timeout_s}, openai {base_url, model, "
            "api_key_secret, system, temperature, max_tokens}, python {callable} (installation "
            "admins only). Templates take {task}, {case_id}, {workdir}, {sample}."
        ),
        parameters={
            "harness": (
                "{id, version, description?, kind: command|openai|python|agent|external, config}."
            ),
            "shared": "Publish into the installation-wide _shared tier.",
        },
        idempotent=True,
    ),
    "list_harnesses": ToolGuide(
        parameters={"search": "Case-insensitive substring of the id or description."},
        read_only=True,
    ),
    "get_harness": ToolGuide(
        parameters={"harness_id": HARNESS_ID, "version": "An exact SemVer or 'latest'."},
        read_only=True,
    ),
    "delete_harness_version": ToolGuide(
        advice="Tombstones one exact version; runs that used it stay readable.",
        parameters={"harness_id": HARNESS_ID, "version": "An exact SemVer version."},
        destructive=True,
    ),
}
"""Operation name → guide, for ``services/harnesses.py``."""
