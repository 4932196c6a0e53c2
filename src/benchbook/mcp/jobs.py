"""Guidance for the import-job tools (SPEC E.5): imports that run in the background."""

from __future__ import annotations

from benchbook.mcp.benchmarks import REQUEST
from benchbook.mcp.guide import ToolGuide

JOB_ID = "The job id returned by start_import (imp_…)."

GUIDES: dict[str, ToolGuide] = {
    "start_import": ToolGuide(
        advice=(
            "For large sources: returns a queued job at once; poll get_import until its state "
            "is finished (succeeded, failed or cancelled) and read its result or error. Over "
            "MCP the source is a catalog benchmark, a Hugging Face dataset, a registered recipe "
            "or inline 'text' — server-local files are not reachable."
        ),
        parameters={"request": REQUEST},
        open_world=True,
    ),
    "list_imports": ToolGuide(parameters={"limit": "Jobs to return, 1-200."}, read_only=True),
    "get_import": ToolGuide(parameters={"job_id": JOB_ID}, read_only=True),
    "cancel_import": ToolGuide(
        advice="A running import rolls back; nothing of it is stored.",
        parameters={"job_id": JOB_ID},
        destructive=True,
        idempotent=True,
    ),
}
"""Operation name → guide, for ``services/jobs.py``."""
