"""Guidance for the run and scorecard tools (SPEC H.4, H.6, H.8)."""

from __future__ import annotations

from benchbook.mcp.guide import ToolGuide

RUN_ID = "The run id returned by start_run (run_…)."
GRADERS = (
    'Grader specs [{id, config}] replacing each case\'s own graders, e.g. [{"id": "numeric"}]'
    ' or a judge [{"id": "judge", "config": {"rubric": …, "base_url": …, "model": …}}].'
)

GUIDES: dict[str, ToolGuide] = {
    "start_run": ToolGuide(
        advice=(
            "Returns at once with the run queued; the server's worker executes it. Poll "
            "get_run until status is finished, failed, cancelled or budget_exhausted, then read "
            "get_scorecard(run.scorecard_id) and list_run_results. request.dataset and "
            "request.harness are 'id' or 'id@version' (a tag or 'latest' works for datasets). "
            "The harness never sees expected answers, milestones or gold metadata."
        ),
        parameters={
            "request": "{dataset, harness, graders?, settings?: {concurrency, repeats,"
            " case_ids, tags, limit, budget_usd, timeout_s}}"
        },
    ),
    "list_runs": ToolGuide(
        parameters={
            "dataset": "Dataset id or id@version.",
            "harness": "Harness id or id@version.",
            "status": "queued, running, finished, failed, cancelled or budget_exhausted.",
            "limit": "Runs to return, 1-500.",
        },
        read_only=True,
    ),
    "get_run": ToolGuide(parameters={"run_id": RUN_ID}, read_only=True),
    "list_run_results": ToolGuide(
        advice="Page with 'after' = the last result's 'position:sample' cursor.",
        parameters={"run_id": RUN_ID, "limit": "Results per page, 1-500."},
        read_only=True,
    ),
    "get_run_trace": ToolGuide(
        parameters={"run_id": RUN_ID, "case_id": "The case id.", "sample": "Repeat index."},
        read_only=True,
    ),
    "cancel_run": ToolGuide(
        advice="In-flight cases finish and are kept; resume_run continues later.",
        parameters={"run_id": RUN_ID},
        idempotent=True,
    ),
    "resume_run": ToolGuide(
        advice="Queues the run again; only (case, sample) pairs without a result run.",
        parameters={"run_id": RUN_ID},
    ),
    "retry_run": ToolGuide(
        advice="Queues the run's errored pairs again, into the same run.",
        parameters={"run_id": RUN_ID},
    ),
    "rescore_run": ToolGuide(
        advice=(
            "Grades the saved traces again under another plan without calling the harness: a "
            "new scorecard; the run's own scorecard is unchanged. Unchanged judges reuse their "
            "cached verdicts (no model call)."
        ),
        parameters={"run_id": RUN_ID, "graders": GRADERS},
    ),
    "list_scorecards": ToolGuide(parameters={"run_id": RUN_ID}, read_only=True),
    "get_scorecard": ToolGuide(
        parameters={"scorecard_id": "The scorecard id (sc_…)."}, read_only=True
    ),
}
"""Operation name → guide, for ``services/runs.py`` and ``services/scorecards.py``."""
