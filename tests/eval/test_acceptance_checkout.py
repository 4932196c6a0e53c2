"""Acceptance (issue 12 items 2 and 4): a SWE-bench-shaped case whose repository comes from a
mirror seeded from a real single-commit bundle runs a ``command`` harness with no network; the
per-case audit (HEAD = base commit, clean tree) is on the result's trace, and no gold field
(patch, test patch, test lists, hints, extra columns) reaches the harness."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from benchbook.contracts.run import RunSettings, StartRunRequest
from benchbook.runtime.environments import repo as repo_env
from benchbook.services import harnesses, imports, mirrors, run_execution, run_results, runs
from benchbook.services.context import Context, local_admin_context
from tests.eval.test_acceptance_gold import DUMP_SCRIPT, MARKER
from tests.eval.test_runs import rctx  # noqa: F401 (fixture)

SHA = "4609f22aff1ad88b81e749e2536761d6ee364d1f"
TASK = "tracing: the span macro drops fields named like keywords."


def _row() -> dict[str, Any]:
    return {
        "repo": "tokio-rs/tracing",
        "instance_id": "tokio-rs__tracing-1",
        "base_commit": SHA,
        "patch": f"--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-{MARKER}\n+x\n",
        "test_patch": f"{MARKER}-test-patch",
        "problem_statement": TASK,
        "hints_text": f"{MARKER}-hints",
        "created_at": "2020-01-01T00:00:00Z",
        "version": "0.1",
        "FAIL_TO_PASS": json.dumps([f"{MARKER}-f2p"]),
        "PASS_TO_PASS": json.dumps([f"{MARKER}-p2p"]),
        "environment_setup_commit": SHA,
        "patch_files": [f"{MARKER}.rs"],
    }


def test_a_mirrored_swe_bench_case_runs_offline_with_its_audit_and_without_gold(
    rctx: Context,  # noqa: F811
    shared_data: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The dump is written outside the workdir, which only an unsandboxed single-user install
    # allows; what the harness receives is the same (the sandbox: tests/runtime/test_sandbox.py).
    rctx = local_admin_context(rctx.engine, rctx.settings.model_copy(update={"sandbox": False}))
    (bundle,) = (shared_data / "contextbench" / "repos").glob("tokio-rs__tracing@*.bundle")
    seeded = mirrors.add_mirror(rctx, "tokio-rs/tracing", str(bundle))
    assert seeded.created and seeded.mirror.commits == 1

    real_git = repo_env.git

    async def offline_git(args: list[str], cwd: Path, **kw: Any) -> str:
        assert args[0] != "clone" and "origin" not in args, f"network: git {args}"
        return await real_git(args, cwd, **kw)

    monkeypatch.setattr(repo_env, "git", offline_git)
    rows = tmp_path / "swe.jsonl"
    rows.write_bytes(orjson.dumps(_row()) + b"\n")
    request = imports.parse_import_request({"benchmark": "swe-bench-lite", "id": "swe-mini"})
    assert imports.import_benchmark(rctx, request, rows).cases == 1

    script = tmp_path / "dump.py"
    script.write_text(DUMP_SCRIPT + "open('NOTES.md', 'w').write('looked\\n')\n")
    dump = tmp_path / "dump"
    dump.mkdir()
    body = {
        "id": "dumper",
        "version": "1.0.0",
        "kind": "command",
        "config": {
            "argv": [sys.executable, str(script)],
            "env": {"DUMP": str(dump), "CASE": "{case_id}"},
        },
    }
    harnesses.register_harness(rctx, harnesses.parse_harness(body))
    start = StartRunRequest(dataset="swe-mini", harness="dumper@1.0.0", settings=RunSettings())
    run = run_execution.execute_run(rctx, runs.start_run(rctx, start).id)
    (result,) = run_results.list_run_results(rctx, run.id)
    assert result.status == "ok", result.error

    trace = run_results.get_run_trace(rctx, run.id, "tokio-rs__tracing-1")
    snap = trace.env_snapshot
    assert snap.audit is not None
    assert (snap.audit.ok, snap.audit.head, snap.audit.clean) == (True, SHA, True)
    assert snap.diff is not None and "+++ b/NOTES.md" in snap.diff

    record = json.loads((dump / "tokio-rs__tracing-1.json").read_text())
    assert MARKER not in json.dumps(record)
    assert record["stdin"] == TASK
    assert "tracing-attributes/src/lib.rs" in "\n".join(record["cwd_files"])
    seen = json.loads(record["case_file"])["metadata"]
    assert seen["base_commit"] == SHA and seen["swebench_image"].startswith("swebench/")
    head = subprocess.run(
        ["git", "-C", str(seeded.mirror.path), "rev-parse", "HEAD"], capture_output=True, text=True
    )
    assert head.stdout.strip() == SHA
