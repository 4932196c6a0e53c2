"""DatasetDiff contract (SPEC A)."""

from __future__ import annotations

from pydantic import BaseModel, Field, JsonValue

from benchbook.contracts.common import LAZY


class FieldChange(BaseModel):
    """One changed field: ``field`` is a dotted name (``expected``, ``metadata.level``)."""

    model_config = LAZY

    field: str
    before: JsonValue = None
    after: JsonValue = None


class CaseRef(BaseModel):
    """An added or removed case, identified by id with its task text."""

    model_config = LAZY

    id: str
    task: str


class ChangedCase(BaseModel):
    """A case present in both versions whose content differs."""

    model_config = LAZY

    id: str
    changes: list[FieldChange]


class DiffSummary(BaseModel):
    """Counts of added, removed, changed and unchanged cases."""

    model_config = LAZY

    added: int
    removed: int
    changed: int
    unchanged: int


class DatasetDiff(BaseModel):
    """The difference between two versions of one dataset.

    ``meta`` covers description, tags and produced_by; every case field and metadata key is
    compared; key order never counts.
    """

    model_config = LAZY

    id: str
    base: str
    candidate: str
    meta: list[FieldChange] = Field(default_factory=list)
    added: list[CaseRef] = Field(default_factory=list)
    removed: list[CaseRef] = Field(default_factory=list)
    changed: list[ChangedCase] = Field(default_factory=list)
    unchanged: int = 0
    summary: DiffSummary
