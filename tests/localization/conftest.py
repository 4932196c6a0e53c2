"""A real ContextBench run: rows of the 50-row release whose repositories are bundled, their
mirrors built from the bundles (no network), the ``localizer`` harness, the case graders."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from benchbook.contracts.imports import ImportRequest
from benchbook.contracts.run import RunSettings, StartRunRequest
from benchbook.services import harnesses, imports, run_execution, runs
from benchbook.services.context import Context, Principal, local_admin_context
from tests.repo_bundles import mirror_from_bundle

# curated id → bundle (``<owner>__<name>``) of the rows used here
ROWS = {
    "SWE-Bench-Verified__python__maintenance__bugfix__90532e38": "pydata__xarray",
    "Multi-SWE-Bench__c__maintenance__bugfix__49f4a0f4": "jqlang__jq",
}
ORIGINAL = {
    "SWE-Bench-Verified__python__maintenance__bugfix__90532e38": "pydata__xarray-4075",
    "Multi-SWE-Bench__c__maintenance__bugfix__49f4a0f4": "jqlang__jq-2654",
}


@dataclass(frozen=True)
class ContextBenchRun:
    """The local admin's context and a finished run over :data:`ROWS`."""

    ctx: Context
    run_id: str
    mirrors: Path


@pytest.fixture
def cb_run(ctx: Context, shared_data: Path, tmp_path: Path) -> ContextBenchRun:
    settings = ctx.settings.model_copy(
        update={"home": tmp_path / "home", "work_root": tmp_path / "work"}
    )
    admin = local_admin_context(ctx.engine, settings)
    mirrors = settings.home / "mirrors"
    for bundle_name in ROWS.values():
        (bundle,) = (shared_data / "contextbench" / "repos").glob(f"{bundle_name}@*.bundle")
        mirror_from_bundle(bundle, mirrors)
    release = shared_data / "contextbench" / "contextbench_verified_test.parquet"
    imports.import_benchmark(admin, ImportRequest(benchmark="contextbench"), file=release)
    harnesses.register_harness(
        admin,
        harnesses.parse_harness(
            {
                "id": "localizer",
                "version": "1.0.0",
                "kind": "python",
                "config": {"callable": "tests.eval.harnesses.localizer:localize"},
            }
        ),
    )
    request = StartRunRequest(
        dataset="contextbench",
        harness="localizer@1.0.0",
        settings=RunSettings(case_ids=list(ROWS), concurrency=2),
    )
    run = runs.start_run(admin, request)
    done = run_execution.execute_run(admin, run.id)
    assert done.status == "finished" and done.counts.ok == len(ROWS), done
    return ContextBenchRun(admin, run.id, mirrors)


def as_viewer(ctx: Context) -> Context:
    """A viewer of the same workspace (authorization depends on the role only)."""
    principal = Principal(user_id="v", display_name="V", workspace=ctx.workspace, role="viewer")
    return Context(principal=principal, engine=ctx.engine, settings=ctx.settings)
