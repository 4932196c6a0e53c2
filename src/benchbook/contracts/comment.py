"""Comment (SPEC A): a discussion entry on a dataset, recipe, run or scorecard."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel

from benchbook.contracts.common import LAZY

ResourceType = Literal["dataset", "recipe", "run", "scorecard"]
"""The kinds of resource that take comments."""

CommentableType = Literal["dataset"]
"""The kinds a comment can be written on or listed for today (``services.comments``
``RESOURCE_CHECKS``); recipes, runs and scorecards join as their checks land."""

MAX_COMMENT_CHARS = 10_000
"""Longest comment body, counted in characters after trimming."""


class Comment(BaseModel):
    """``body`` is 1–10,000 characters after trim; ``parent_id`` names the comment replied to,
    which lives on the same resource. Comments are private to ``workspace`` and listed oldest
    first."""

    model_config = LAZY

    id: int
    workspace: str
    resource_type: ResourceType
    resource_id: str
    parent_id: int | None = None
    author: str
    body: str
    created_at: datetime
    updated_at: datetime
