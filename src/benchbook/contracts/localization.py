"""Contracts of the localization bridges (SPEC I): the upstream ContextBench scorer and the
official SWE-bench harness.

Row shapes follow the upstream formats (LOCALIZATION §5, the ``swebench`` package); they are
kept as JSON objects so a file written from them is byte-for-byte what the upstream reads.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, JsonValue, NonNegativeInt

from benchbook.contracts.common import STRICT
from benchbook.contracts.scorecard import Scorecard


class SkippedCase(BaseModel):
    """A (case, sample) of the run left out of an export, and why."""

    model_config = STRICT
    case_id: str
    sample: int = 0
    reason: str


class LocalizationExport(BaseModel):
    """The upstream scorer's two inputs for one run (LOCALIZATION §5).

    Attributes:
        gold: gold rows ``{inst_id, original_inst_id, commit, repo_url, gold_ctx: [{file,
            start_line, end_line, content}], patch, test_patch, split}``.
        predictions: prediction rows ``{instance_id, repo_url, commit, model_patch, traj_data:
            {pred_steps, pred_files, pred_spans, pred_symbols}}``, same order.
        skipped: cases not exported (not ``ok``, no gold, not a git repository).
        warnings: e.g. a repository whose mirror is missing (``repo_url`` is then its URL).
    """

    model_config = STRICT
    run_id: str
    sample: int = 0
    gold: list[dict[str, JsonValue]] = Field(default_factory=list)
    predictions: list[dict[str, JsonValue]] = Field(default_factory=list)
    skipped: list[SkippedCase] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)


class MetricDifference(BaseModel):
    """One metric where Benchbook and the upstream scorer disagree (``None``: absent)."""

    model_config = STRICT
    metric: str
    ours: float | None
    upstream: float | None


class InstanceComparison(BaseModel):
    """One instance, ours beside upstream.

    Attributes:
        ours: our ``localization`` score detail (the upstream ``--out`` shape plus F1 and
            ranked metrics); None when we could not score it (``ours_error`` says why).
        upstream: the scorer's ``--out`` row; None when it wrote none for this instance.
        upstream_error: the row's ``error`` (``missing_gold``, ``checkout_failed`` …) or
            ``"no row"``.
        differences: every compared metric that differs (see
            :func:`benchbook.eval.contextbench_upstream.differences`).
        agree: both sides scored it and no metric differs, or both report the same error
            row (``no_context_extracted``).
    """

    model_config = STRICT
    instance_id: str
    ours: dict[str, Any] | None = None
    ours_error: str | None = None
    upstream: dict[str, Any] | None = None
    upstream_error: str | None = None
    differences: list[MetricDifference] = Field(default_factory=list)
    agree: bool = False


class UpstreamComparison(BaseModel):
    """A run scored by the upstream ContextBench scorer, beside our numbers.

    Attributes:
        argv: the scorer command line as run (the four contract options appended).
        error: the invocation failed as a whole (exit status, timeout, no ``--out``); the
            per-instance rows then have ``upstream = None``.
        problems: malformed ``--out`` lines (``"line N: …"``), skipped.
        stderr_tail: the end of the scorer's stderr (its aggregates).
        duration_ms: the scorer's wall time.
        skipped / warnings: as in :class:`LocalizationExport` (a repository without a mirror
            is passed to the scorer by its URL).
        agreeing / differing: instance counts (an instance only one side scored differs).
    """

    model_config = STRICT
    run_id: str
    argv: list[str]
    returncode: int | None = None
    error: str | None = None
    problems: list[str] = Field(default_factory=list)
    stderr_tail: str = ""
    duration_ms: NonNegativeInt = 0
    instances: list[InstanceComparison] = Field(default_factory=list)
    skipped: list[SkippedCase] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    agreeing: NonNegativeInt = 0
    differing: NonNegativeInt = 0


class SwebenchPredictions(BaseModel):
    """Official SWE-bench predictions of a run: rows ``{instance_id, model_name_or_path,
    model_patch}`` (the patch = the run's repository diff; empty when it changed nothing)."""

    model_config = STRICT
    run_id: str
    model_name_or_path: str
    predictions: list[dict[str, str]] = Field(default_factory=list)
    skipped: list[SkippedCase] = Field(default_factory=list)


class SwebenchEvaluation(BaseModel):
    """The official harness run on a run's predictions.

    Attributes:
        status: ``graded`` (its report imported as ``scorecard``), ``unavailable`` (Docker or
            the ``swebench`` package missing: ``message`` says which) or ``failed`` (the harness
            ran and left no usable report; ``message`` and ``stderr_tail`` say why).
    """

    model_config = STRICT
    run_id: str
    status: Literal["graded", "unavailable", "failed"]
    message: str
    argv: list[str] = Field(default_factory=list)
    stderr_tail: str = ""
    scorecard: Scorecard | None = None


class GoldSymbolOut(BaseModel):
    """A definition the patch changes: ``path:Qualified.name``, node type, ``added`` /
    ``deleted`` / ``modified``, whole lines at base and after the patch (1-based inclusive,
    ``[start, end]``; null when absent there)."""

    model_config = STRICT
    id: str
    kind: str
    change: Literal["added", "deleted", "modified"]
    base_lines: list[int] | None = None
    patched_lines: list[int] | None = None


class GoldFile(BaseModel):
    """The gold of one file of a patch (``benchbook.datasets.gold.FileGold``); line ranges are
    ``[start, end]``, 1-based inclusive: ``removed``, ``inserted`` and ``enclosing`` in base
    numbering, ``added`` in patched numbering."""

    model_config = STRICT
    path: str
    old_path: str
    status: Literal["added", "deleted", "modified", "renamed"]
    binary: bool = False
    file_level: bool = True
    removed: list[list[int]] = Field(default_factory=list)
    added: list[list[int]] = Field(default_factory=list)
    inserted: list[list[int]] = Field(default_factory=list)
    enclosing: list[list[int]] = Field(default_factory=list)
    symbols: list[GoldSymbolOut] = Field(default_factory=list)


class GoldLocations(BaseModel):
    """The gold locations Benchbook derives (SPEC I) from a case's patch or a given patch.

    Attributes:
        dataset, case_id: the case (null for a bare patch).
        base: where the base tree came from: ``mirror`` (definitions and enclosing
            definitions included) or null (the patch alone: lines only).
        files: one entry per file of the patch, in patch order.
        spans: what the ``localization`` grader scores against, ``[{file, start_line,
            end_line}]`` (the case's ``gold_context`` when it has one; ``0, 0`` = file level).
        warnings: e.g. no mirror of the case's repository.
    """

    model_config = STRICT
    dataset: str | None = None
    case_id: str | None = None
    base: Literal["mirror"] | None = None
    files: list[GoldFile] = Field(default_factory=list)
    spans: list[dict[str, JsonValue]] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
