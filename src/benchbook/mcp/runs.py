"""Guidance for the run and scorecard tools (SPEC H.4, H.6, H.8)."""

from __future__ import annotations

from benchbook.mcp.guide import ToolGuide

RUN_ID = "The run id returned by start_run (run_…)."
GRADERS = (
    'Grader specs [{id, config}] replacing each case\'s own graders, e.g. [{"id": "numeric"}]'
    ' or a judge [{"id": "judge", "config": {"rubric": …, "base_url": …, "model": …}}].'
)

BUDGET = (
    "Optional new spend cap in USD for the rest of the run (what it may spend from now on);"
    " recorded with who set it and when."
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
    "report_run": ToolGuide(
        advice=(
            "For a harness run outside Benchbook: report its answers and get them graded by "
            "the same graders as any run. Returns the finished run; read "
            "get_scorecard(run.scorecard_id). request.harness is 'id@version' (registered as "
            "an external harness on first use). Each (case_id, sample) once; unknown case ids "
            "are rejected by row."
        ),
        parameters={
            "request": "{dataset, harness: 'id@version', graders?, results: [{case_id, answer,"
            " sample?, error?, trace?}]}"
        },
    ),
    "import_inspect_run": ToolGuide(
        advice=(
            "Bring an Inspect AI log in as a run: its samples are matched to the dataset's cases"
            " (by id, else by input text), graded by Benchbook's graders, and Inspect's own"
            " scores kept as imported_scorecard. Send a .json log as request.text or any log"
            " (.eval zip) as request.content_base64. Unmatched samples are listed and nothing"
            " is registered unless allow_unmatched."
        ),
        parameters={
            "request": "{dataset: 'id@version', harness?: 'id@version', graders?,"
            " allow_unmatched?, text? | content_base64?}"
        },
    ),
    "import_lm_eval_run": ToolGuide(
        advice=(
            "Bring one lm-eval task's --log_samples output in as a run: samples_text is the"
            " samples_<task>_*.jsonl, results_text the results_*.json (model arguments, lm-eval"
            " version). filtered_resps of request.filter (default the first filter) is the"
            " answer; each lm-eval metric an imported score."
        ),
        parameters={
            "request": "{dataset: 'id@version', harness?, graders?, allow_unmatched?, task?,"
            " filter?, samples_text, results_text?}"
        },
    ),
    "list_runs": ToolGuide(
        parameters={
            "dataset": "Dataset id or id@version.",
            "harness": "Harness id or id@version.",
            "status": "queued, running, finished, failed, cancelled or budget_exhausted.",
            "limit": "Runs to return, 1-500.",
            "before": "Next page: the id of the previous page's last run.",
        },
        read_only=True,
    ),
    "get_run": ToolGuide(parameters={"run_id": RUN_ID}, read_only=True),
    "list_run_results": ToolGuide(
        advice="Page with 'after' = the last result's 'position:sample' cursor.",
        parameters={
            "run_id": RUN_ID,
            "limit": "Results per page, 1-500.",
            "outcome": "passed, failed (errored included), errored, grader_error, not_run;"
            " regressed or fixed against 'baseline'.",
            "search": "Only case ids containing this text (case-insensitive).",
            "baseline": "For regressed/fixed: a scorecard id, run id or scorecard tag.",
            "scorecard": "One of the run's scorecards (a rescore's sc_…); default its own.",
        },
        read_only=True,
    ),
    "list_scorecard_results": ToolGuide(
        advice=(
            "The per-case results of one scorecard — a rescore's included — with its scores,"
            " verdicts and grader errors. Page with 'after' = the last result's"
            " 'position:sample' cursor."
        ),
        parameters={
            "scorecard_id": "The scorecard id (sc_…), e.g. from rescore_run or list_scorecards.",
            "after": "The previous page's last 'position:sample' cursor.",
            "limit": "Results per page, 1-500.",
            "outcome": "passed, failed, errored, grader_error, not_run; regressed or fixed"
            " against 'baseline'.",
            "search": "Only case ids containing this text (case-insensitive).",
            "baseline": "For regressed/fixed: a scorecard id, run id or scorecard tag.",
        },
        read_only=True,
    ),
    "get_run_trace": ToolGuide(
        advice="A trace past 16 MiB of JSON is refused: read it with export_run_trace.",
        parameters={"run_id": RUN_ID, "case_id": "The case id.", "sample": "Repeat index."},
        read_only=True,
    ),
    "export_run_trace": ToolGuide(
        advice="The trace's JSON text, cut at 8 MiB with a note (HTTP streams it whole).",
        parameters={"run_id": RUN_ID, "case_id": "The case id.", "sample": "Repeat index."},
        read_only=True,
    ),
    "export_run": ToolGuide(
        advice=(
            "One row per (case, sample): status, passed, answer, error, cost_usd, tokens, "
            "duration_ms and score.<metric> for each metric of the scorecard. Over MCP the text "
            "is bounded; for a whole large run use GET /api/runs/{id}/export or "
            "`benchbook runs export` (also Parquet)."
        ),
        parameters={
            "run_id": RUN_ID,
            "scorecard_id": "Whose scores (sc_…); default the run's own scorecard.",
            "format": "jsonl (default) or csv.",
        },
        read_only=True,
    ),
    "cancel_run": ToolGuide(
        advice="In-flight cases finish and are kept; resume_run continues later.",
        parameters={"run_id": RUN_ID},
        idempotent=True,
    ),
    "resume_run": ToolGuide(
        advice="Queues the run again; only (case, sample) pairs without a result run.",
        parameters={"run_id": RUN_ID, "budget_usd": BUDGET},
    ),
    "retry_run": ToolGuide(
        advice="Queues the run's errored pairs again, into the same run.",
        parameters={"run_id": RUN_ID, "budget_usd": BUDGET},
    ),
    "rescore_run": ToolGuide(
        advice=(
            "Grades the saved traces again under another plan without calling the harness: a "
            "new scorecard; the run's own scorecard is unchanged. Unchanged judges reuse their "
            "cached verdicts (no model call)."
        ),
        parameters={
            "run_id": RUN_ID,
            "graders": GRADERS,
            "preflight": "Ask each judge endpoint once first (default true).",
        },
    ),
    "list_scorecards": ToolGuide(parameters={"run_id": RUN_ID}, read_only=True),
    "get_scorecard": ToolGuide(
        parameters={"scorecard_id": "The scorecard id (sc_…)."}, read_only=True
    ),
    "set_scorecard_tags": ToolGuide(
        advice=(
            "Replaces the scorecard's tags (an empty list clears them); a tag names one "
            "scorecard per dataset id, so setting it moves it. Only a finished run's scorecard "
            "can be tagged. compare_scorecards takes a tag as its baseline."
        ),
        parameters={
            "scorecard_id": "The scorecard id (sc_…).",
            "tags": 'The complete tag list, e.g. ["baseline"].',
        },
        idempotent=True,
    ),
    "compare_scorecards": ToolGuide(
        advice=(
            "Pairs the two scorecards by (case id, sample): transitions (fixed, regressed, "
            "still_passing, still_failing, missing_in_candidate, new_in_candidate), the "
            "pass-rate delta with a seeded paired bootstrap 95% interval, McNemar's exact "
            "p-value, metric/cost/token/latency deltas. comparable is false (with reasons) "
            "when the dataset content or grader hashes differ; the numbers are still given."
        ),
        parameters={
            "baseline": "Scorecard id (sc_…), run id (run_…) or a scorecard tag such as"
            " 'baseline', resolved on the candidate's dataset id.",
            "candidate": "Scorecard id (sc_…) or run id (run_…).",
            "seed": "Bootstrap seed (default 0).",
            "resamples": "Bootstrap resamples, 1-100000 (default 10000).",
        },
        read_only=True,
    ),
    "list_case_results": ToolGuide(
        advice="Page with before = the previous page's next_before.",
        parameters={
            "dataset_id": "The dataset id (every version's runs count).",
            "case_id": "The case id.",
            "before": "Next page: next_before of the previous page.",
            "limit": "Results per page, 1-500.",
        },
        read_only=True,
    ),
    "list_flaky_cases": ToolGuide(
        advice=(
            "A case is flaky when its verdict differs across the run's samples (kind "
            "'samples') or across this run and the other ended runs of the same harness@version "
            "on the same dataset version ('runs'). list_run_results(outcome='flaky') pages them."
        ),
        parameters={"run_id": RUN_ID},
        read_only=True,
    ),
    "get_leaderboard": ToolGuide(
        advice=(
            "Which harness is best on a dataset version, at what cost: one row per "
            "harness@version (its latest finished scorecard; select='best' or 'all' for "
            "others) with pass rate and Wilson interval, pass@k, cost per case, tokens and "
            "latency. Rows graded under different plans are in separate groups, never ranked "
            "together; frontier=true marks the cost-accuracy Pareto frontier of a group."
        ),
        parameters={
            "dataset_id": "The dataset id.",
            "version": "SemVer, a version tag or 'latest' (default).",
            "select": "latest (default), best or all.",
            "sort": "pass_rate (default), cost, date or harness.",
            "include_partial": (
                "Also list runs over a subset of the cases (--limit/--case-id), in groups "
                "of their own marked partial (default false: only full runs are ranked)."
            ),
            "tag": "Only scorecards holding this tag.",
            "plan": "Only plans whose hash starts with this.",
        },
        read_only=True,
    ),
}
"""Operation name → guide, for ``services/runs.py``, ``services/scorecards.py`` and
``services/leaderboards.py``."""
