"""Import contracts (SPEC E.1, E.4, E.5): the request, preview, progress and outcome shapes."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from benchbook.contracts.common import (
    LAZY,
    STRICT,
    JsonBool,
    JsonPositiveInt,
    ResourceId,
    SemVerStr,
    exactly_one_of,
    not_both,
)
from benchbook.contracts.dataset import GraderSpec
from benchbook.contracts.provenance import Origin, Scoring
from benchbook.contracts.recipe import FileFormat, GraderTemplate, Mapping, Recipe, RecipeSource


class RecipeRef(BaseModel):
    """A registered recipe ``id`` at ``version`` (default ``latest``)."""

    model_config = STRICT
    id: ResourceId
    version: str = "latest"


class ImportRequest(BaseModel):
    """What to import (SPEC E.1): exactly one of ``spec`` (an inline recipe body), ``recipe``
    (a registered recipe) or ``benchmark`` (a catalog id).

    ``id`` is the target dataset id (default: the recipe's or benchmark's id). ``version`` or
    ``bump`` picks the version: with neither, the first import is ``1.0.0`` and a re-import
    targets the latest live version (so an unchanged source reports "unchanged"). ``limit`` reads
    at most that many source rows. ``text`` is inline file content for file sources (``format``
    names its format when the recipe does not). ``split``/``config`` override a Hugging Face
    source. ``shared`` publishes into ``_shared`` (installation admins only).
    """

    model_config = ConfigDict(
        **STRICT,
        json_schema_extra={
            **exactly_one_of(spec="object", recipe="object", benchmark="string"),
            **not_both("version", "bump"),
        },
    )
    spec: Recipe | None = None
    recipe: RecipeRef | None = None
    benchmark: str | None = None
    id: ResourceId | None = None
    version: SemVerStr | None = None
    bump: Literal["patch", "minor", "major"] | None = None
    limit: JsonPositiveInt | None = None
    text: str | None = None
    format: FileFormat | None = None
    split: str | None = None
    config: str | None = None
    shared: JsonBool = False

    @model_validator(mode="after")
    def _one_source(self) -> ImportRequest:
        given = [k for k in ("spec", "recipe", "benchmark") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(
                "give exactly one of spec, recipe or benchmark"
                + (f" (got {', '.join(given)})" if given else "")
            )
        if self.version is not None and self.bump is not None:
            raise ValueError("give version or bump, not both")
        return self


class CatalogMatch(BaseModel):
    """A catalog entry a previewed source matches (issue 14): its columns are all there and the
    sampled rows build with its mapping. Importing with ``benchmark`` set to it applies its
    ``mapping``, ``graders`` (ids), lineage and answer extraction."""

    model_config = LAZY

    benchmark: str
    description: str | None = None
    columns: list[str]
    mapping: Mapping
    graders: list[str] = Field(default_factory=list)
    assertion: str


class PreviewResult(BaseModel):
    """A look at a source without writing anything (SPEC E.4).

    ``fields``: the union of row keys in first-seen order; ``rows``: ≤ 20 raw rows;
    ``mapping_guess``: field roles guessed from the names; ``mapping``: the mapping that an
    import would apply (the recipe's or catalog's); ``cases``: those rows built into cases with
    it (JSON); ``assertion``: one sentence on how the cases will run; ``warnings``: incomplete
    environments and rows that would fail (with their row numbers). For an inline ``spec``:
    ``catalog_matches`` lists the catalog entries the rows match (best first),
    ``suggested_id`` is the default dataset id (the best match's, else the file name without
    extension and split words) and ``grader_guess`` the graders the built answers suggest
    (``numeric`` for numbers, else ``answer-match``).
    """

    model_config = LAZY

    fields: list[str]
    rows: list[dict[str, JsonValue]]
    mapping_guess: dict[str, Any]
    mapping: Mapping | None = None
    cases: list[dict[str, JsonValue]] = Field(default_factory=list)
    assertion: str
    warnings: list[str] = Field(default_factory=list)
    total: int | None = None
    catalog_matches: list[CatalogMatch] = Field(default_factory=list)
    suggested_id: str | None = None
    grader_guess: list[GraderSpec] = Field(default_factory=list)


class ImportProgress(BaseModel):
    """Progress of an import job: rows read from the source, cases built, total if known.

    ``fraction`` is the share of the source read, 0.0 to 1.0, when it can be known: bytes read of
    the file's size for JSONL and CSV files (compressed bytes for gzip), else rows read of
    ``total``; 1.0 once every row was read; None when neither is known (a JSONL file on
    Hugging Face). ``notes`` says how the source is being read when it is not the plain way,
    e.g. a Hugging Face split whose viewer failed mid-split and is read from its Parquet export
    at the same commit.
    """

    model_config = LAZY

    rows_read: int
    cases_built: int
    total: int | None = None
    fraction: float | None = Field(default=None, ge=0.0, le=1.0)
    notes: list[str] = Field(default_factory=list)


class ImportResult(BaseModel):
    """Outcome of an import (SPEC E.5). ``created`` is False when the identical version existed.

    ``identical_to`` is set when a ``bump`` found nothing new: the rows and metadata equal the
    latest version, which is returned (``version``) and no version is registered.
    ``notes`` is the source's read log (see ``ImportProgress.notes``), empty when nothing unusual
    happened.
    """

    model_config = LAZY

    workspace: str
    id: str
    version: str
    cases: int
    created: bool
    revived: bool = False
    content_hash: str
    identical_to: str | None = None
    notes: list[str] = Field(default_factory=list)


class BenchmarkInfo(BaseModel):
    """A catalog entry as listed by ``list_benchmarks`` (SPEC F)."""

    model_config = LAZY

    id: str
    version: str
    description: str | None = None
    category: str
    license: str | None = None
    gated: bool = False
    origin: Origin | None = None
    scoring: Scoring | None = None
    source: RecipeSource
    mapping: Mapping
    graders: list[GraderTemplate] = Field(default_factory=list)
    extra_graders: list[GraderSpec] = Field(default_factory=list)
