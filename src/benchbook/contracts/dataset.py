"""Dataset and Case contracts (SPEC A).

A :class:`Dataset` is ``{id, version, description?, cases, tags, produced_by?}``; a :class:`Case`
is pure data. The canonical JSON of the parsed model (defaults filled) is its identity, see
``benchbook.datasets.identity``.
"""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from benchbook.contracts.common import (
    STRICT,
    CaseId,
    ContentTags,
    HttpUrl,
    JsonNonNegativeInt,
    JsonPositiveInt,
    NonEmptyStr,
    ResourceId,
    SemVerStr,
    TextNoNul,
    contradiction,
    schema_rule,
)
from benchbook.contracts.git_urls import GitUrl
from benchbook.contracts.provenance import Provenance


class PromptEnv(BaseModel):
    """Question answering with no world. ``context`` is optional text shown with the task."""

    model_config = STRICT
    kind: Literal["prompt"] = "prompt"
    context: str | None = None


class GitSource(BaseModel):
    """A repository cloned from ``git`` (http(s) URL) and checked out at ``ref``.

    ``git`` names a host and ``/owner/name(.git)`` steps (``contracts.git_urls``): no ``..``,
    ``.`` or empty host label or path step, since both become directories of the mirror cache.
    """

    model_config = STRICT
    git: GitUrl
    ref: NonEmptyStr


class FilesSource(BaseModel):
    """A repository made of the given files: ``{relative path: text}``."""

    model_config = STRICT
    files: dict[str, str]


class PathSource(BaseModel):
    """A repository already inside the case image (for example ``/testbed``)."""

    model_config = STRICT
    path: NonEmptyStr


class RepoEnv(BaseModel):
    """A code repository the agent works in; ``setup`` runs before the harness: either the
    name of a registered environment recipe (``"id@version"``, its commands run) or a list of
    commands (run only when an admin wrote the dataset version, see docs/security.md)."""

    model_config = STRICT
    kind: Literal["repo"] = "repo"
    source: GitSource | FilesSource | PathSource
    setup: list[str] | NonEmptyStr = Field(default_factory=list)


class BrowserEnv(BaseModel):
    """A web browser, optionally opened at ``start_url``."""

    model_config = STRICT
    kind: Literal["browser"] = "browser"
    start_url: HttpUrl | None = None


class OsUseEnv(BaseModel):
    """A desktop (computer use) on display ``display``."""

    model_config = STRICT
    kind: Literal["os-use"] = "os-use"
    display: str = ":99"
    setup: list[str] | None = None
    screenshot_cmd: str | None = None
    screenshot_path: str | None = None


Env = Annotated[PromptEnv | RepoEnv | BrowserEnv | OsUseEnv, Field(discriminator="kind")]
"""The four environment kinds, discriminated by ``kind``."""


class Milestone(BaseModel):
    """An intermediate expectation; gold data scored as ``judge:<judge>:milestone:<id>``."""

    model_config = STRICT
    id: NonEmptyStr
    description: NonEmptyStr


class GraderSpec(BaseModel):
    """A grader family ``id`` (SPEC H) with its ``config``; unknown ids fail at run planning."""

    model_config = STRICT
    id: NonEmptyStr
    config: dict[str, JsonValue] = Field(default_factory=dict)
    direction: Literal["higher_is_better", "lower_is_better", "neutral"] | None = None


#: The grader families this installation runs (``eval.graders.GRADERS``' keys; a test keeps
#: them equal). A case may name any id (checked when a run is planned); the graders a run
#: request names are :class:`RunGrader`, whose schema lists these.
GRADER_IDS = (
    "answer-match",
    "numeric",
    "gaia",
    "regex",
    "judge",
    "command",
    "tests-pass",
    "swe-bench",
    "steps",
    "cost",
    "latency",
    "localization",
)


def _config_rules(schema: dict[str, Any]) -> None:
    """Each grader id's ``config`` schema (:mod:`benchbook.contracts.graders`, imported here:
    it is defined after this module)."""
    from benchbook.contracts.graders import plan_config_rules

    plan_config_rules(schema)


class RunGrader(GraderSpec):
    """A grader a run request names for its plan (``start_run``, ``report_run``,
    ``rescore_run``): ``id`` is one of :data:`GRADER_IDS`, as the JSON Schema's ``enum`` says.
    An unknown id is refused when the run is planned (``eval.graders.check_grader_ids``:
    InvalidInput listing the known ids), and so is a ``config`` key its grader does not take
    (the schema's ``if``/``then`` rules per id say which). A :class:`GraderSpec` instance is
    taken as one."""

    model_config = ConfigDict(**STRICT, from_attributes=True, json_schema_extra=_config_rules)
    id: Annotated[NonEmptyStr, schema_rule(enum=list(GRADER_IDS))]


class Placement(BaseModel):
    """Where a case may run."""

    model_config = STRICT
    target: str | None = None
    os: Literal["linux", "windows", "macos"] | None = None
    isolation: str | None = None


class Resources(BaseModel):
    """Requested compute: CPU in millicores, memory in MB, GPU count."""

    model_config = STRICT
    cpu_millicores: JsonPositiveInt | None = None
    memory_mb: JsonPositiveInt | None = None
    gpu: JsonNonNegativeInt | None = None


#: JSON Schema of :class:`Network`'s rule (an absent ``mode`` is ``public``).
HOSTS_ONLY_WITH_ALLOWLIST: dict[str, Any] = {
    "not": {
        "required": ["allowed_hosts"],
        "properties": {
            "allowed_hosts": {"type": "array", "minItems": 1},
            "mode": {"not": {"const": "allowlist"}},
        },
    }
}


class Network(BaseModel):
    """Network policy; ``allowed_hosts`` only with ``mode = allowlist``."""

    model_config = ConfigDict(**STRICT, json_schema_extra=HOSTS_ONLY_WITH_ALLOWLIST)
    mode: Literal["public", "none", "allowlist"] = "public"
    allowed_hosts: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _hosts_only_with_allowlist(self) -> Network:
        if self.allowed_hosts and self.mode != "allowlist":
            raise ValueError("allowed_hosts is only allowed with mode 'allowlist'")
        return self


class Case(BaseModel):
    """One evaluation case: pure data.

    ``expected``, ``milestones`` and the metadata keys named in ``gold_fields`` are gold: they are
    stored with the case but never handed to a harness. ``timeout_s`` is in seconds (> 0).
    ``expected`` is any JSON value kept with its type (``0``, ``"0"``, ``false`` and ``null`` are
    four different answers; integers of any size stay exact; NaN and infinities are rejected).
    """

    model_config = STRICT
    id: CaseId
    env: Env
    task: str
    expected: JsonValue = None
    milestones: list[Milestone] | None = None
    graders: list[GraderSpec] = Field(default_factory=list)
    image: str | None = None
    timeout_s: JsonPositiveInt = 1800
    tags: ContentTags = Field(default_factory=list)
    placement: Placement | None = None
    resources: Resources | None = None
    network: Network | None = None
    metadata: dict[str, JsonValue] = Field(default_factory=dict)
    gold_fields: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _milestone_ids_unique(self) -> Case:
        if self.milestones:
            dupes = [k for k, n in Counter(m.id for m in self.milestones).items() if n > 1]
            if dupes:
                raise contradiction(f"duplicate milestone ids: {', '.join(dupes)}")
        missing = [k for k in self.gold_fields if k not in self.metadata]
        if missing:
            keys = ", ".join(missing)
            raise contradiction(f"gold_fields name keys absent from metadata: {keys}")
        return self


def duplicate_ids(ids: list[str]) -> list[str]:
    """The ids that occur more than once, in first-seen order."""
    return [k for k, n in Counter(ids).items() if n > 1]


class CaseMatch(BaseModel):
    """A case found by :func:`~benchbook.services.datasets.search_cases`, with its 0-based
    ``position`` in the version's order."""

    model_config = STRICT
    position: int
    case: Case


class CaseNeighbours(BaseModel):
    """Where a case sits in its version: 0-based ``position`` and the ids of the cases before
    and after it (None at either end)."""

    model_config = STRICT
    position: int
    previous: str | None = None
    next: str | None = None


class Dataset(BaseModel):
    """A versioned dataset ``{id, version, description?, cases, tags, produced_by?}``.

    Raises (on validation): a pydantic ``ValidationError`` when the id or version is malformed or
    case ids repeat (the message lists the duplicates).
    """

    model_config = STRICT
    id: ResourceId
    version: SemVerStr
    description: TextNoNul | None = None
    cases: list[Case] = Field(default_factory=list)
    tags: ContentTags = Field(default_factory=list)
    produced_by: Provenance | None = None

    @model_validator(mode="after")
    def _case_ids_unique(self) -> Dataset:
        dupes = duplicate_ids([c.id for c in self.cases])
        if dupes:
            shown = ", ".join(dupes[:20])
            raise contradiction(f"case ids must be unique within a version; duplicates: {shown}")
        return self
