"""Guidance for the dataset tools (SPEC B, D): how an agent registers, reads, retires versions."""

from __future__ import annotations

from benchbook.mcp.guide import ToolGuide

REF = "A version reference: an exact SemVer such as '1.2.0', 'latest', or a version tag."
DATASET_ID = "The dataset id: 1-128 of [A-Za-z0-9._-], starting with a letter or digit."

SHARED = "Check against the installation-wide _shared tier instead of your workspace."

GUIDES: dict[str, ToolGuide] = {
    "register_dataset": ToolGuide(
        advice=(
            "Versions are immutable. To add, change or remove cases, register a NEW version of "
            "the same id (bump the SemVer, e.g. 1.0.0 -> 1.1.0); never reuse a version number for "
            "different content — that is a 'conflict' error naming id@version. Registering "
            "identical content again is a no-op (created: false), so retrying is safe. Run "
            "validate_dataset first when unsure. Result: {workspace, id, version, created, "
            "revived, cases, content_hash}."
        ),
        parameters={
            "dataset": (
                "The dataset body: {id, version (SemVer), description?, tags?, cases: [{id, env, "
                "task, expected?, graders?, ...}]}. Case ids must be unique within the version."
            ),
            "shared": "Publish into the installation-wide _shared tier (installation admins only).",
        },
        idempotent=True,
    ),
    "validate_dataset": ToolGuide(
        advice=(
            "A dry run of register_dataset that writes nothing: returns ok=false with "
            "errors [{path, message}] for schema problems, the existing versions of the id, and "
            "whether this version exists (identical or would_conflict). Use it to pick the next "
            "version number."
        ),
        parameters={
            "payload": "The dataset body exactly as register_dataset would take it.",
            "shared": SHARED,
        },
        read_only=True,
    ),
    "list_datasets": ToolGuide(
        advice=(
            "Start here to discover datasets: your workspace's ids plus _shared ones (shared: "
            "true). Page with limit/offset; 'total' is the number of matching datasets."
        ),
        parameters={
            "search": "Case-insensitive substring of the id, description or tags.",
            "owner": "'all', 'own' (your workspace) or 'shared' (the _shared tier).",
            "sort": "'name' (ascending), 'updated' or 'cases' (descending).",
            "limit": "Page size, 1-1000.",
            "offset": "Items to skip.",
        },
        read_only=True,
    ),
    "get_dataset": ToolGuide(
        advice=(
            "Returns the version's metadata and one page of cases. To read more, call again "
            "with after = the previous page's next_after until next_after is null."
        ),
        parameters={
            "dataset_id": DATASET_ID,
            "ref": REF,
            "after": "The cursor next_after of the previous page; omit for the first page.",
            "limit": "Cases per page, 1-1000.",
        },
        read_only=True,
    ),
    "get_case": ToolGuide(
        parameters={"dataset_id": DATASET_ID, "ref": REF, "case_id": "The case's id."},
        read_only=True,
    ),
    "search_cases": ToolGuide(
        advice=(
            "Finds cases whose id, task, expected or metadata contains the text "
            "(case-insensitive), in the version's order, each with its 0-based position; read "
            "one whole with get_case."
        ),
        parameters={
            "dataset_id": DATASET_ID,
            "ref": REF,
            "query": "The text to find (not empty).",
            "limit": "At most this many cases, 1-200.",
        },
        read_only=True,
    ),
    "get_case_neighbours": ToolGuide(
        parameters={"dataset_id": DATASET_ID, "ref": REF, "case_id": "The case's id."},
        read_only=True,
    ),
    "export_dataset": ToolGuide(
        advice=(
            "Returns the cases as JSONL text (one canonical JSON case per line), BOUNDED for MCP: "
            "output stops at a line boundary once it would exceed the limit, and then "
            "'truncated' is true — page with get_dataset instead, or download the full file "
            "over HTTP at GET /api/datasets/{id}/versions/{ref}/cases.jsonl."
        ),
        parameters={"dataset_id": DATASET_ID, "ref": REF},
        read_only=True,
    ),
    "list_dataset_versions": ToolGuide(
        advice="Live versions, newest (highest SemVer) first, with tags and content hashes.",
        parameters={"dataset_id": DATASET_ID},
        read_only=True,
    ),
    "diff_datasets": ToolGuide(
        advice=(
            "Compares two versions of ONE dataset: cases added, removed and changed (with the "
            "changed fields) plus metadata changes. Typical use: base = the previous version, "
            "candidate = 'latest'."
        ),
        parameters={"dataset_id": DATASET_ID, "base": REF, "candidate": REF},
        read_only=True,
    ),
    "delete_dataset_version": ToolGuide(
        advice=(
            "Deletes (tombstones) one exact version of your own workspace — not 'latest', not a "
            "tag, never a _shared version (not_found). Only the version's creator or a workspace "
            "admin may delete it (forbidden otherwise). Registering identical content later "
            "revives it."
        ),
        parameters={"dataset_id": DATASET_ID, "version": "An exact SemVer of your workspace."},
        destructive=True,
        idempotent=False,
    ),
    "delete_dataset_versions": ToolGuide(
        advice=(
            "All or nothing: every listed version is checked first and one missing (not_found) "
            "or forbidden version deletes nothing. Omitting 'versions' deletes EVERY live version "
            "of the id in your workspace."
        ),
        parameters={
            "dataset_id": DATASET_ID,
            "versions": "Exact SemVers to delete; omit (null) for all own live versions.",
        },
        destructive=True,
    ),
    "set_dataset_version_tags": ToolGuide(
        advice=(
            "Replaces the tags of one exact version of your workspace (e.g. ['prod']). A tag held "
            "by a sibling version moves here. Tags are at most 60 characters, at most 20, and may "
            "be neither 'latest' nor a SemVer. An empty list removes every tag."
        ),
        parameters={
            "dataset_id": DATASET_ID,
            "version": "An exact SemVer of your workspace.",
            "tags": "The complete new list of tags.",
        },
        destructive=True,
        idempotent=True,
    ),
    "get_dataset_activity": ToolGuide(
        advice="Newest first; page with before = the previous page's next_before.",
        parameters={
            "dataset_id": DATASET_ID,
            "before": "The cursor next_before of the previous page; omit for the first page.",
            "limit": "Items per page, 1-1000.",
        },
        read_only=True,
    ),
}
"""Operation name → guide, for the dataset operations of ``services/datasets.py``."""
