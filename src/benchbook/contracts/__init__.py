"""Pydantic v2 contracts: pure data, no I/O. Shapes are those of SPEC section A."""

from benchbook.contracts.dataset import (
    BrowserEnv,
    Case,
    Dataset,
    Env,
    FilesSource,
    GitSource,
    GraderSpec,
    Milestone,
    Network,
    OsUseEnv,
    PathSource,
    Placement,
    PromptEnv,
    RepoEnv,
    Resources,
)
from benchbook.contracts.diff import DatasetDiff, DiffSummary, FieldChange
from benchbook.contracts.provenance import Origin, Provenance, Scoring, SourceRef
from benchbook.contracts.recipe import GraderTemplate, Mapping, Recipe, RecipeSource
from benchbook.contracts.score import Score, ScoreStatus

__all__ = [
    "BrowserEnv",
    "Case",
    "Dataset",
    "DatasetDiff",
    "DiffSummary",
    "Env",
    "FieldChange",
    "FilesSource",
    "GitSource",
    "GraderSpec",
    "GraderTemplate",
    "Mapping",
    "Milestone",
    "Network",
    "Origin",
    "OsUseEnv",
    "PathSource",
    "Placement",
    "PromptEnv",
    "Provenance",
    "Recipe",
    "RecipeSource",
    "RepoEnv",
    "Resources",
    "Score",
    "ScoreStatus",
    "Scoring",
    "SourceRef",
]
