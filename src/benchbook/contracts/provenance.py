"""Lineage contracts: Provenance, SourceRef, Origin (SPEC A, E.7)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from benchbook.contracts.common import STRICT, HttpUrl


class SourceRef(BaseModel):
    """Where rows came from. Hugging Face: the resolved commit sha in ``revision``;
    files (local or uploaded, recorded alike): the bytes' ``sha256`` (hex). ``upload`` is
    only read: versions imported before uploads were recorded as ``file`` carry it."""

    model_config = STRICT
    kind: Literal["huggingface", "file", "upload"]
    dataset: str | None = None
    config: str | None = None
    split: str | None = None
    file: str | None = None
    revision: str | None = None
    sha256: str | None = None


class Origin(BaseModel):
    """The public record of a benchmark. The five link fields accept only http(s) URLs."""

    model_config = STRICT
    homepage: HttpUrl | None = None
    paper: HttpUrl | None = None
    code: HttpUrl | None = None
    data: HttpUrl | None = None
    leaderboard: HttpUrl | None = None
    authors: str | None = None
    license: str | None = None
    citation: str | None = None
    task_type: str | None = None


class Scoring(BaseModel):
    """Whether grading is the benchmark's ``official`` scorer or a ``proxy`` of it."""

    model_config = STRICT
    kind: Literal["official", "proxy"]
    approximates: str | None = None
    official_evaluator: str | None = None


class Provenance(BaseModel):
    """How a version was made: ``via`` a spec, a recipe or a catalog entry ``id@version``."""

    model_config = STRICT
    via: Literal["spec", "recipe", "catalog"]
    id: str
    version: str | None = None
    source: SourceRef | None = None
    origin: Origin | None = None
    scoring: Scoring | None = None
