"""Guidance for the comment tools (SPEC A Comment): notes on datasets, recipes, runs, scorecards."""

from __future__ import annotations

from benchbook.mcp.guide import ToolGuide

RESOURCE = {
    "resource_type": "What the comment is on: 'dataset', 'recipe', 'run' or 'scorecard'.",
    "resource_id": "The resource's id (for a dataset, its dataset id; comments span versions).",
}

GUIDES: dict[str, ToolGuide] = {
    "list_comments": ToolGuide(parameters=RESOURCE, read_only=True),
    "create_comment": ToolGuide(
        advice="Comments are visible to your workspace only. Reply by passing parent_id.",
        parameters={
            **RESOURCE,
            "body": "The text, 1-10,000 characters after trimming.",
            "parent_id": "The id of the comment to reply to; omit for a new thread.",
        },
    ),
    "delete_comment": ToolGuide(
        advice="Deletes the comment and every reply below it (author or admin only).",
        parameters={"comment_id": "The comment's id from list_comments."},
        destructive=True,
    ),
}
"""Operation name → guide, for ``services/comments.py``."""
