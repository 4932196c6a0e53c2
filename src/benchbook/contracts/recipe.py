"""Recipe (adapter spec) and Mapping contracts (SPEC A, E.3)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from benchbook.contracts.common import (
    PY_SPACE_CHARS,
    STRICT,
    STRICT_EAGER,
    HfDatasetId,
    HttpUrl,
    JsonBool,
    NonEmptyStr,
    ResourceId,
    SemVerStr,
    at_least_one_text_of,
    schema_rule,
)
from benchbook.contracts.dataset import GraderSpec, Placement
from benchbook.contracts.provenance import Origin, Scoring

_SP = f"[{PY_SPACE_CHARS}]"
#: A placeholder's name, as ``datasets.templates.compile_template`` accepts it: no braces, and
#: not empty once trimmed and stripped of a trailing ``?`` (so not ``SP* ?* SP*``): a character
#: other than a space or ``?``, or a ``?`` then a space then a ``?``.
_NAME = rf"[^{{}}]*(?:[^{{}}?{PY_SPACE_CHARS}]|\?[^{{}}]*{_SP}[^{{}}]*\?)[^{{}}]*"
#: JSON Schema of a row template (SPEC E.3): literal text without single braces, ``{{`` and
#: ``}}``, and placeholders ``{name}`` / ``{name?}``; a test keeps it equal to the compiler.
ROW_TEMPLATE_PATTERN = rf"^(?:\{{\{{|\}}\}}|\{{{_NAME}\}}|[^{{}}])*$"
RowTemplate = Annotated[str, schema_rule(pattern=ROW_TEMPLATE_PATTERN)]
"""A row template (checked when a builder compiles it: InvalidInput naming the field)."""

EnvChoice = Literal["auto", "prompt", "repo", "browser", "os-use"]
FileFormat = Literal["csv", "jsonl", "json", "parquet"]


class Mapping(BaseModel):
    """How source rows become cases (SPEC E.3).

    Templates (``task_template``, ``files_template`` values, grader templates) use ``{field}``,
    dotted paths ``{a.b}`` / ``{a.0}``, ``{field?}`` for optional fields and ``{{``/``}}`` for
    literal braces. ``answer_pattern`` is a regular expression whose first group (or whole match)
    is the expected answer, for sources that embed it in longer text (GSM8K's ``#### 18``).
    ``metadata_fields`` is a list of columns or ``"*"`` for every column not mapped to id, task or
    answer (the default).
    """

    model_config = ConfigDict(
        **STRICT, json_schema_extra=at_least_one_text_of("task_field", "task_template")
    )
    id_field: str | None = None
    task_field: str | None = None
    task_template: RowTemplate | None = None
    answer_field: str | None = None
    answer_pattern: str | None = None
    answer_mode: Literal["exact", "contains", "normalized"] = "exact"
    env: EnvChoice = "auto"
    git_field: str | None = None
    ref_field: str | None = None
    repo_path: str | None = None
    files_template: dict[str, RowTemplate] | None = None
    start_url_field: str | None = None
    start_url: HttpUrl | None = None
    image_field: str | None = None
    image: RowTemplate | None = None
    placement: Placement | None = None
    tag_fields: list[str] = Field(default_factory=list)
    metadata_fields: list[str] | Literal["*"] = "*"
    gold_fields: list[str] = Field(default_factory=list)
    flag_fields: list[str] = Field(default_factory=list)
    test_cmd_field: str | None = None
    extra_graders: list[GraderSpec] = Field(default_factory=list)

    @model_validator(mode="after")
    def _task_source(self) -> Mapping:
        if not self.task_field and not self.task_template:
            raise ValueError("a mapping needs task_field or task_template")
        return self


#: JSON Schema of :class:`RecipeSource`'s rule: a ``huggingface`` source names its dataset.
#: Stated positively (a file source, or a dataset given): schemathesis generates a negated
#: ``if`` badly.
HUGGINGFACE_NEEDS_DATASET: dict[str, Any] = {
    "anyOf": [
        {"type": "object", "properties": {"kind": {"const": "file"}}},
        {"type": "object", "required": ["dataset"], "properties": {"dataset": {"type": "string"}}},
    ]
}


class RecipeSource(BaseModel):
    """Where a recipe reads rows.

    ``huggingface``: ``dataset`` (``owner/name``), ``config``, ``split``, optional ``revision``;
    ``file`` (optional inside ``dataset`` for a raw Hub file). ``file``: a local path or an upload,
    with ``format`` guessed from the extension when omitted.
    ``json_key`` picks the list inside a JSON object that wraps one.

    Raises (on validation): a ``huggingface`` source without ``dataset``.
    """

    model_config = ConfigDict(**STRICT, json_schema_extra=HUGGINGFACE_NEEDS_DATASET)
    kind: Literal["huggingface", "file"]
    dataset: HfDatasetId | None = None
    config: str | None = None
    split: str | None = None
    revision: str | None = None
    file: str | None = None
    format: FileFormat | None = None
    json_key: str | None = None
    gated: JsonBool = False

    @model_validator(mode="after")
    def _huggingface_needs_dataset(self) -> RecipeSource:
        if self.kind == "huggingface" and self.dataset is None:
            raise ValueError("dataset: a huggingface source needs a dataset (owner/name)")
        return self


class GraderTemplate(BaseModel):
    """A grader whose config values are templates expanded per row."""

    model_config = STRICT
    id: NonEmptyStr
    config: dict[str, JsonValue] = Field(default_factory=dict)


class Recipe(BaseModel):
    """An adapter spec: source + mapping + grader templates + provenance. Immutable, versioned."""

    model_config = STRICT_EAGER
    id: ResourceId
    version: SemVerStr = "1.0.0"
    description: str | None = None
    category: Literal["qa", "coding", "browser", "desktop", "tool"] = "qa"
    origin: Origin | None = None
    scoring: Scoring | None = None
    source: RecipeSource
    mapping: Mapping
    grader_templates: list[GraderTemplate] = Field(default_factory=list)
