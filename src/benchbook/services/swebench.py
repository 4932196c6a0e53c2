"""SWE-bench grading of a saved run (SPEC I): official predictions, the official harness when
Docker is there, and its report imported as ``swe-bench`` scores on a new scorecard.

Formats: :mod:`benchbook.eval.swebench_grading` (the ``swebench`` package's own). A run's
instance id is the case's ``original_inst_id`` metadata when it has one (ContextBench rows keep
the SWE-bench id there), else the case id. Importing never changes the run's own scorecard
(like a rescore, SPEC H.8).
"""

from __future__ import annotations

import hashlib
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson
from pydantic import JsonValue

from benchbook.contracts.dataset import Case, GraderSpec
from benchbook.contracts.localization import SkippedCase, SwebenchEvaluation, SwebenchPredictions
from benchbook.contracts.run import RunPlan
from benchbook.contracts.score import Score
from benchbook.contracts.scorecard import Scorecard
from benchbook.errors import Conflict, InvalidInput
from benchbook.eval import swebench_grading as official
from benchbook.eval.contextbench_upstream import write_jsonl
from benchbook.eval.graders.command import run_in_workspace
from benchbook.eval.grading import decide_passed, grader_error_of
from benchbook.eval.sync import run_sync
from benchbook.services.context import Context
from benchbook.services.localization import SavedCase, saved_cases
from benchbook.services.runs import load_run
from benchbook.services.scorecards import store_scorecard
from benchbook.store import runs as repo

GRADER = "swe-bench"
DEFAULT_HARNESS_TIMEOUT_S = 6 * 3600.0


def instance_id_of(case: Case) -> str:
    """The SWE-bench instance id of a case (module docstring)."""
    original = case.metadata.get("original_inst_id")
    return original if isinstance(original, str) and original else case.id


def export_swebench_predictions(
    ctx: Context, run_id: str, model_name_or_path: str | None = None, sample: int = 0
) -> SwebenchPredictions:
    """A saved run as official SWE-bench predictions: ``{instance_id, model_name_or_path,
    model_patch}`` per ``ok`` case, the patch being the run's repository diff (``""`` when the
    harness changed nothing).

    Args:
        run_id: the run.
        model_name_or_path: the model name the harness reports under; default the run's
            harness ``id@version``.
        sample: which repeat to export (one prediction per instance).

    Raises:
        Forbidden: without ``runs:read``.
        NotFound: unknown run or another workspace's.
    """
    ctx.require("runs:read")
    with ctx.engine.connect() as conn:
        run = load_run(conn, ctx, run_id)
    model = model_name_or_path or run.harness_ref
    out = SwebenchPredictions(run_id=run_id, model_name_or_path=model)
    for item in saved_cases(ctx, run, sample):
        if isinstance(item, SkippedCase):
            out.skipped.append(item)
            continue
        patch = item.trace.env_snapshot.diff or ""
        out.predictions.append(official.prediction_row(instance_id_of(item.case), model, patch))
    return out


def import_swebench_report(
    ctx: Context, run_id: str, report: dict[str, JsonValue], sample: int = 0
) -> Scorecard:
    """Import an official SWE-bench harness report onto a saved run as ``swe-bench`` scores: a
    new scorecard (``rescore_of`` = the run's own, which is unchanged).

    Per instance: resolved → passed (value 1), unresolved or empty patch → failed (value 0),
    an error → score status ``error``; the report's test lists go to ``detail``. Run cases the
    report does not mention get a ``skipped`` score.

    Args:
        run_id: the run.
        report: the run-level summary (``{resolved_ids, unresolved_ids, error_ids,
            empty_patch_ids, …}``) or per-instance reports merged into one object
            (``{instance_id: {resolved, tests_status: {FAIL_TO_PASS: {success, failure},
            PASS_TO_PASS: …}}}``).
        sample: the repeat the report grades.

    Raises:
        Forbidden: without ``runs:write``.
        InvalidInput: a malformed report (the field and instance named), or an instance in the
            report that is not in the run (named); nothing is stored.
        Conflict: the run has not ended.
        NotFound: unknown run or another workspace's.
    """
    ctx.require("runs:write")
    verdicts = official.parse_report(report)
    digest = hashlib.sha256(orjson.dumps(report, option=orjson.OPT_SORT_KEYS)).hexdigest()
    return _import_verdicts(ctx, run_id, verdicts, digest, sample)


def _import_verdicts(
    ctx: Context,
    run_id: str,
    verdicts: dict[str, official.InstanceVerdict],
    report_sha256: str,
    sample: int,
) -> Scorecard:
    with ctx.engine.connect() as conn:
        run = load_run(conn, ctx, run_id)
    if run.status in ("queued", "running"):
        raise Conflict(f"run {run_id} is {run.status}; import once it has ended", {"id": run_id})
    spec = GraderSpec(id=GRADER, config={"source": "report", "report_sha256": report_sha256})
    rows, seen = _report_rows(ctx, run, sample, spec, verdicts)
    unknown = sorted(set(verdicts) - seen)
    if unknown:
        shown = ", ".join(unknown[:20])
        raise InvalidInput(
            f"the report names {len(unknown)} instance(s) not in run {run_id}: {shown}",
            {"unknown": unknown[:100]},
        )
    return store_scorecard(ctx, run, RunPlan(graders=[spec]), rows)


def _report_rows(
    ctx: Context,
    run: repo.RunRow,
    sample: int,
    spec: GraderSpec,
    verdicts: dict[str, official.InstanceVerdict],
) -> tuple[list[repo.ScoreRow], set[str]]:
    """Scorecard rows for every result of the run; the instance ids of the run seen. An
    instance the official harness errored on is a grader error (never passed)."""
    rows: list[repo.ScoreRow] = []
    seen: set[str] = set()
    by_case: dict[str, SavedCase] = {}
    for item in saved_cases(ctx, run, sample):
        if isinstance(item, SavedCase):
            by_case[item.case.id] = item
    with ctx.engine.connect() as conn:
        results = list(repo.iter_results(conn, run.id))
    for r in results:
        saved = by_case.get(r.case_id) if r.sample == sample else None
        if saved is None:  # an errored harness fails; another repeat has no verdict here
            passed = False if r.status == "error" else None
            rows.append((r.case_id, r.sample, passed, "[]", None))
            continue
        iid = instance_id_of(saved.case)
        seen.add(iid)
        score = _score(spec, verdicts.get(iid))
        dumped = orjson.dumps([score.model_dump(mode="json")]).decode()
        graded = [score]
        rows.append(
            (r.case_id, r.sample, decide_passed("ok", graded), dumped, grader_error_of(graded))
        )
    return rows, seen


def _score(spec: GraderSpec, verdict: official.InstanceVerdict | None) -> Score:
    base: dict[str, Any] = {"grader": spec.id, "metric": spec.id}
    if verdict is None:
        return Score(**base, value=0.0, status="skipped", detail={"reason": "not in the report"})
    detail = {"instance_id": verdict.instance_id, **verdict.detail}
    if verdict.outcome == "error":
        return Score(**base, value=0.0, status="error", detail=detail)
    resolved = verdict.outcome == "resolved"
    return Score(**base, value=1.0 if resolved else 0.0, passed=resolved, detail=detail)


def evaluate_swebench_run(
    ctx: Context,
    run_id: str,
    dataset_name: str = "princeton-nlp/SWE-bench_Lite",
    max_workers: int = 4,
    timeout_s: float = DEFAULT_HARNESS_TIMEOUT_S,
) -> SwebenchEvaluation:
    """Grade a saved run with the official SWE-bench harness (``python -m
    swebench.harness.run_evaluation``) and import its report (:func:`import_swebench_report`).

    Docker and the ``swebench`` package (in the setting ``swebench_python``, default this
    interpreter) are checked first; without them the result is ``unavailable`` with a message
    saying which is missing (``Docker not found on PATH …``) and nothing runs. A harness that
    fails or leaves no report is ``failed`` with its stderr tail. Never raises for the
    harness's own failures.

    Args:
        run_id: the run.
        dataset_name: the harness's ``--dataset_name`` (a Hugging Face id or a local file).
        max_workers: the harness's ``--max_workers`` (1–64).
        timeout_s: the harness's wall-time limit in seconds.

    Raises:
        Forbidden: without ``runs:write``.
        InvalidInput: ``max_workers`` or ``timeout_s`` out of range.
        NotFound: unknown run or another workspace's.
    """
    ctx.require("runs:write")
    if not 1 <= max_workers <= 64 or timeout_s <= 0:
        raise InvalidInput(
            "max_workers must be 1-64 and timeout_s positive",
            {"max_workers": max_workers, "timeout_s": timeout_s},
        )
    predictions = export_swebench_predictions(ctx, run_id)
    python = ctx.settings.swebench_python or sys.executable
    check = official.check_harness(python)
    if not check.ok:
        return SwebenchEvaluation(run_id=run_id, status="unavailable", message=check.message)
    base = ctx.settings.home / "swebench"
    base.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"{run_id}-", dir=base))
    path = work / "predictions.jsonl"
    write_jsonl(predictions.predictions, path)
    argv = official.harness_argv(python, dataset_name, path, run_id, max_workers)
    done = run_sync(run_in_workspace(argv, work, timeout_s))
    result = SwebenchEvaluation(
        run_id=run_id, status="failed", message="", argv=argv, stderr_tail=done.stderr[-4000:]
    )
    if done.timed_out:
        result.message = f"the harness did not finish within {timeout_s:g} s (killed)"
        return result
    try:
        verdicts = official.collect_reports(work, run_id, predictions.model_name_or_path)
    except InvalidInput as exc:
        result.message = exc.message
        return result
    if not verdicts:
        result.message = f"the harness exited with status {done.exit_code} and wrote no report"
        return result
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    try:
        result.scorecard = _import_verdicts(ctx, run_id, verdicts, digest, 0)
    except InvalidInput as exc:
        result.message = exc.message
        return result
    result.status, result.message = "graded", f"{len(verdicts)} instance(s) graded"
    return result
