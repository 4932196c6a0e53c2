"""Job and recipe-registry shapes (SPEC D, E.5, E.6): import jobs, registered recipes."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from benchbook.contracts.common import LAZY
from benchbook.contracts.imports import ImportProgress, ImportResult
from benchbook.contracts.registry import ValidationIssue

JobState = Literal["queued", "running", "succeeded", "failed", "cancelled"]
FINISHED_STATES: frozenset[str] = frozenset({"succeeded", "failed", "cancelled"})


class JobError(BaseModel):
    """Why a job failed or stopped: the same ``{code, message, details}`` envelope as HTTP."""

    model_config = LAZY

    code: str
    message: str
    details: dict[str, Any] = Field(default_factory=dict)


class ImportJob(BaseModel):
    """An import running in the background (SPEC E.5).

    ``state`` moves ``queued → running → succeeded | failed | cancelled`` and never back.
    ``progress`` counts rows read from the source and cases built (``total`` when the source
    knows it); it is written at most every 0.25 s or 1000 rows. ``result`` is set once
    succeeded; ``error`` once failed or cancelled (code ``cancelled``). ``request`` is the
    import request as JSON without inline ``text``; ``file_name`` names an uploaded file.
    """

    model_config = LAZY

    id: str
    workspace: str
    state: JobState
    request: dict[str, Any]
    file_name: str | None = None
    progress: ImportProgress
    result: ImportResult | None = None
    error: JobError | None = None
    cancel_requested: bool = False
    created_by: str
    created_at: datetime
    started_at: datetime | None = None
    updated_at: datetime
    finished_at: datetime | None = None


class RecipeRegisterResult(BaseModel):
    """Outcome of ``register_recipe``: ``created`` is False for an identical re-register."""

    model_config = LAZY

    workspace: str
    id: str
    version: str
    created: bool
    content_hash: str


class RecipeValidationReport(BaseModel):
    """Dry-run outcome of ``validate_recipe``: schema errors by path, existing versions, and
    whether registering would be a no-op (``identical``) or a conflict."""

    model_config = LAZY

    ok: bool
    errors: list[ValidationIssue] = Field(default_factory=list)
    existing_versions: list[str] = Field(default_factory=list)
    version_exists: bool = False
    would_conflict: bool = False
    identical: bool = False


class RecipeSummary(BaseModel):
    """One row of ``list_recipes``: an id with its owner (own workspace or ``_shared``)."""

    model_config = LAZY

    workspace: str
    id: str
    shared: bool
    latest: str
    versions: list[str]
    description: str | None = None
    category: str
    source_kind: str
    created_by: str
    updated_at: datetime
