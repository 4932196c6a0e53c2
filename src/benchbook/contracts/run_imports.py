"""Run import contracts (issue 31): runs another tool made, brought in as ordinary runs.

An Inspect AI log (``.eval`` or ``.json``) or lm-evaluation-harness ``--log_samples`` output
becomes one reported run of a Benchbook dataset version, graded by Benchbook's graders, plus an
**imported scorecard** holding the tool's own scores (one metric per Inspect scorer or lm-eval
metric), so both can be read and compared. What the tool was (name, version, task, model, the
log's sha256) is kept in the run's reproducibility record under ``import``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, NonNegativeInt

from benchbook.contracts.common import STRICT, STRICT_EAGER, IdRef, JsonBool, PinnedRef
from benchbook.contracts.dataset import RunGrader
from benchbook.contracts.run import Run
from benchbook.contracts.scorecard import Scorecard

ImportTool = Literal["inspect", "lm-eval"]


class ImportInspectRequest(BaseModel):
    """``import_inspect_run``'s body: one Inspect AI log and the dataset version it ran on.

    Attributes:
        dataset: ``id`` or ``id@ref`` of the version the log's samples are matched against.
        harness: ``id@version`` to record the run under; default derived from the log:
            ``inspect-<task>-<model>@<inspect_ai version>`` (characters outside
            ``[A-Za-z0-9._-]`` become ``-``).
        graders: Benchbook's grading plan (default: each case's own graders).
        allow_unmatched: register the run even when some samples match no case (they are
            left out and listed); default refuse and register nothing.
        text: a ``.json`` log inline (MCP; the CLI and HTTP send the file instead).
        content_base64: a log inline as base64 (an ``.eval`` zip, or a ``.json`` log).
    """

    model_config = STRICT_EAGER
    dataset: IdRef
    harness: PinnedRef | None = None
    graders: list[RunGrader] | None = None
    allow_unmatched: JsonBool = False
    text: str | None = None
    content_base64: str | None = None


class ImportLmEvalRequest(BaseModel):
    """``import_lm_eval_run``'s body: one lm-eval task's ``--log_samples`` output.

    Attributes:
        dataset, harness, graders, allow_unmatched: as :class:`ImportInspectRequest`; the
            derived harness is ``lm-eval-<task>-<model>@<lm_eval version>``.
        task: which task's ``samples_<task>_*.jsonl`` to import when the folder holds several.
        filter: which of lm-eval's filters gives the answer (``strict-match``,
            ``flexible-extract``, ``none`` …); default the task's first filter as lm-eval
            wrote it (the first filter of ``filter_list``, ``none`` without one).
        samples_text: the ``samples_<task>_*.jsonl`` inline (MCP).
        results_text: the ``results_*.json`` inline (MCP; optional there, it brings the model
            arguments and lm-eval's version).
    """

    model_config = STRICT_EAGER
    dataset: IdRef
    harness: PinnedRef | None = None
    graders: list[RunGrader] | None = None
    allow_unmatched: JsonBool = False
    task: str | None = None
    filter: str | None = None
    samples_text: str | None = None
    results_text: str | None = None


class ImportedRun(BaseModel):
    """The run an import registered, and the tool's own scores beside Benchbook's.

    Attributes:
        run: the finished run; its own scorecard (``run.scorecard_id``) is Benchbook's graders'.
        imported_scorecard: the tool's scores as a scorecard of the same run (``rescore_of`` =
            the run's own): one metric per Inspect scorer or lm-eval metric (grader ``inspect``
            or ``lm-eval``), a verdict where the tool's value is 0/1 or C/I.
        tool, tool_version: ``inspect`` or ``lm-eval`` and the version that wrote the log.
        samples: (sample, epoch) rows read; ``matched_by_id`` + ``matched_by_input`` of them
            matched a case (by id, else by the input text's sha256).
        unmatched: the sample ids that matched no case (at most 100 listed), left out of the
            run (only with ``allow_unmatched``).
    """

    model_config = STRICT
    run: Run
    imported_scorecard: Scorecard
    tool: ImportTool
    tool_version: str | None = None
    samples: NonNegativeInt
    matched_by_id: NonNegativeInt
    matched_by_input: NonNegativeInt
    unmatched: list[str] = Field(default_factory=list)
