"""The public service operations every transport must expose (SPEC D: one service method, one
HTTP route, one MCP tool each).

``OPERATIONS`` maps the operation name — the service function's own name, which is also the HTTP
route's ``operationId`` and the MCP tool's name — to the function. Parity tests read it:
``tests/api/test_parity.py`` fails when an operation has no HTTP route, and the MCP server will be
checked against the same mapping. Add an operation here when its service function becomes public.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchbook.services import (
    accounts,
    comments,
    comparisons,
    datasets,
    gold_locations,
    harnesses,
    hf,
    imports,
    jobs,
    keys,
    localization,
    recipes,
    run_reports,
    run_results,
    runs,
    scorecards,
    secrets,
    swebench,
)

OPERATIONS: dict[str, Callable[..., Any]] = {
    fn.__name__: fn
    for fn in (
        datasets.register_dataset,
        datasets.validate_dataset,
        datasets.list_datasets,
        datasets.get_dataset,
        datasets.get_case,
        datasets.search_cases,
        datasets.get_case_neighbours,
        datasets.export_dataset,
        datasets.list_dataset_versions,
        datasets.diff_datasets,
        datasets.delete_dataset_version,
        datasets.delete_dataset_versions,
        datasets.set_dataset_version_tags,
        datasets.get_dataset_activity,
        imports.list_benchmarks,
        imports.get_benchmark,
        imports.preview_benchmark_source,
        imports.import_benchmark,
        hf.search_hf_datasets,
        hf.list_hf_splits,
        hf.list_hf_files,
        recipes.register_recipe,
        recipes.validate_recipe,
        recipes.list_recipes,
        recipes.get_recipe,
        jobs.start_import,
        jobs.list_imports,
        jobs.get_import,
        jobs.cancel_import,
        comments.list_comments,
        comments.create_comment,
        comments.delete_comment,
        secrets.set_secret,
        secrets.list_secrets,
        secrets.delete_secret,
        keys.create_api_key,
        keys.list_api_keys,
        keys.revoke_api_key,
        accounts.list_members,
        accounts.add_member,
        accounts.set_member_role,
        accounts.remove_member,
        accounts.create_user,
        accounts.list_users,
        accounts.create_workspace,
        accounts.list_workspaces,
        harnesses.register_harness,
        harnesses.list_harnesses,
        harnesses.get_harness,
        harnesses.delete_harness_version,
        runs.start_run,
        run_reports.report_run,
        runs.list_runs,
        runs.get_run,
        run_results.list_run_results,
        run_results.list_scorecard_results,
        run_results.get_run_trace,
        runs.cancel_run,
        runs.resume_run,
        runs.retry_run,
        scorecards.rescore_run,
        scorecards.list_scorecards,
        scorecards.get_scorecard,
        localization.export_localization_run,
        localization.score_localization_upstream,
        gold_locations.derive_gold_locations,
        swebench.export_swebench_predictions,
        swebench.import_swebench_report,
        swebench.evaluate_swebench_run,
        scorecards.set_scorecard_tags,
        comparisons.compare_scorecards,
    )
}
"""Operation name → service function, in SPEC D order."""
