"""Shapes returned by the registry operations (SPEC D)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from benchbook.contracts.common import LAZY
from benchbook.contracts.dataset import Case
from benchbook.contracts.provenance import Provenance


class RegisterResult(BaseModel):
    """Outcome of ``register_dataset``: ``created`` is False for an identical re-register;
    ``revived`` is True when identical content brought a tombstoned version back."""

    model_config = LAZY

    workspace: str
    id: str
    version: str
    created: bool
    revived: bool = False
    cases: int
    content_hash: str


class ValidationIssue(BaseModel):
    """One problem at a JSON path such as ``cases.3.env.kind``."""

    model_config = LAZY

    path: str
    message: str


class ValidationReport(BaseModel):
    """Dry-run outcome of ``validate_dataset``."""

    model_config = LAZY

    ok: bool
    errors: list[ValidationIssue] = Field(default_factory=list)
    existing_versions: list[str] = Field(default_factory=list)
    version_exists: bool = False
    would_conflict: bool = False
    identical: bool = False
    cases: int = 0


class VersionInfo(BaseModel):
    """A live version's metadata."""

    model_config = LAZY

    workspace: str
    id: str
    version: str
    description: str | None = None
    tags: list[str] = Field(default_factory=list)
    version_tags: list[str] = Field(default_factory=list)
    produced_by: Provenance | None = None
    cases: int
    content_hash: str
    created_by: str
    created_at: datetime
    is_latest: bool = False


class DatasetSummary(BaseModel):
    """One row of ``list_datasets``: an id with its owner and latest version."""

    model_config = LAZY

    workspace: str
    id: str
    shared: bool
    latest: str
    versions: int
    cases: int
    description: str | None = None
    tags: list[str] = Field(default_factory=list)
    version_tags: dict[str, str] = Field(default_factory=dict)
    """Each version tag of the dataset (``baseline``) → the version it names (``1.0.0``)."""
    created_by: str
    updated_at: datetime


class DatasetPage(BaseModel):
    """A page of ``list_datasets`` with totals over the whole filtered listing."""

    model_config = LAZY

    items: list[DatasetSummary]
    total: int
    total_cases: int = 0
    total_versions: int = 0
    limit: int
    offset: int


class DatasetView(BaseModel):
    """``get_dataset``: a version's metadata and one keyset page of cases.

    ``next_after`` is the cursor for the next page (pass it as ``after``), None at the end.
    """

    model_config = LAZY

    version: VersionInfo
    cases: list[Case]
    next_after: int | None = None


class DeleteResult(BaseModel):
    """The versions tombstoned by a delete."""

    model_config = LAZY

    workspace: str
    id: str
    deleted: list[str]


class ActivityItem(BaseModel):
    """One entry of a dataset's timeline."""

    model_config = LAZY

    kind: Literal["registered", "deleted", "revived", "tagged", "comment", "run"]
    actor: str
    at: datetime
    details: dict[str, Any] = Field(default_factory=dict)
    cursor: int


class ActivityPage(BaseModel):
    """Timeline newest first; ``next_before`` pages further back."""

    model_config = LAZY

    items: list[ActivityItem]
    next_before: int | None = None
