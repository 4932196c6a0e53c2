"""Pydantic v2 contracts: pure data, no I/O. Shapes are those of SPEC section A.

The names below are exported lazily: ``from benchbook.contracts import Case`` imports
``contracts.dataset`` only, so a command that needs one contract does not build the models
of every other (issue 32: data command start-up).
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_EXPORTS = {
    "BrowserEnv": "dataset",
    "Case": "dataset",
    "Dataset": "dataset",
    "DatasetDiff": "diff",
    "DiffSummary": "diff",
    "Env": "dataset",
    "FieldChange": "diff",
    "FilesSource": "dataset",
    "GitSource": "dataset",
    "GraderSpec": "dataset",
    "GraderTemplate": "recipe",
    "Mapping": "recipe",
    "Milestone": "dataset",
    "Network": "dataset",
    "Origin": "provenance",
    "OsUseEnv": "dataset",
    "PathSource": "dataset",
    "Placement": "dataset",
    "PromptEnv": "dataset",
    "Provenance": "provenance",
    "Recipe": "recipe",
    "RecipeSource": "recipe",
    "RepoEnv": "dataset",
    "Resources": "dataset",
    "Score": "score",
    "ScoreStatus": "score",
    "Scoring": "provenance",
    "SourceRef": "provenance",
}
"""Exported name → its module under ``benchbook.contracts``."""

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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
