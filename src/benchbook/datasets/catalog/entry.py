"""The catalog entry shape: a :class:`Recipe` plus an optional per-case hook (SPEC F)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchbook.contracts import Recipe
from benchbook.contracts.imports import BenchmarkInfo
from benchbook.datasets.mapping import CaseHook
from benchbook.datasets.sources.base import RowSource

FileSourceFactory = Callable[[Path, str | None], RowSource]
"""``(path, display name) → RowSource`` for a local file of a benchmark with its own reader."""


@dataclass(frozen=True)
class CatalogEntry:
    """A first-party benchmark: its recipe (source, mapping, graders, origin, scoring) and an
    optional ``hook(case_dict, row)`` for rules a mapping cannot express (for example TREK's
    refusal criteria on ``impossible`` rows or SWE-bench image names), and an optional
    ``file_source`` that reads a local file instead of the generic file reader (ContextBench's
    pinned release and load report)."""

    recipe: Recipe
    hook: CaseHook | None = None
    file_source: FileSourceFactory | None = None

    @property
    def id(self) -> str:
        """The catalog id (also the default dataset id)."""
        return self.recipe.id

    def info(self) -> BenchmarkInfo:
        """The listing shape of this entry."""
        r = self.recipe
        return BenchmarkInfo(
            id=r.id,
            version=r.version,
            description=r.description,
            category=r.category,
            license=r.origin.license if r.origin else None,
            gated=r.source.gated,
            origin=r.origin,
            scoring=r.scoring,
            source=r.source,
            mapping=r.mapping,
            graders=r.grader_templates,
            extra_graders=r.mapping.extra_graders,
        )
