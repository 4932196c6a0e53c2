"""Guidance for the harness tools (SPEC H.1): the agents under evaluation, versioned."""

from __future__ import annotations

from benchbook.mcp.guide import ToolGuide
from benchbook.mcp.registered import id_text, noun_guides
from benchbook.transports import nouns

GUIDES: dict[str, ToolGuide] = noun_guides(
    nouns.HARNESSES,
    ToolGuide(
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
    id_text("harness"),
    delete="Tombstones one exact version; runs that used it stay readable.",
)
"""Operation name → guide, for ``services/harnesses.py``."""
