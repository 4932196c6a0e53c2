"""Localization bridges (SPEC I; LOCALIZATION §5): a run's gold and predictions in the upstream
ContextBench formats, and the user's upstream scorer run beside our numbers.

Both read a saved run only (traces, the case gold, the mirror cache): nothing calls a harness
and nothing is stored. The scorer command is code run on this server, so it comes from the
settings (``BENCHBOOK_CONTEXTBENCH_SCORER_CMD``) or, in a request, only from an installation
admin (the CLI's local admin is one) — like a ``python`` harness (SPEC H.1).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from benchbook.contracts.dataset import Case, GitSource, GraderSpec
from benchbook.contracts.localization import (
    InstanceComparison,
    LocalizationExport,
    MetricDifference,
    SkippedCase,
    UpstreamComparison,
)
from benchbook.contracts.run import Trace
from benchbook.contracts.score import Score
from benchbook.errors import Forbidden, InvalidInput
from benchbook.eval import contextbench_upstream as upstream
from benchbook.eval.checkout import Checkout
from benchbook.eval.graders.localization import gold_spans, grade_localization, submitted_prediction
from benchbook.eval.grading import Submission
from benchbook.eval.scorer_repos import ScorerRepoError, has_commit, scorer_repository
from benchbook.runtime.environments.repo import RepoError, mirror_path
from benchbook.services import traces
from benchbook.services.context import Context
from benchbook.services.runs import load_run
from benchbook.store import datasets as dataset_repo
from benchbook.store import runs as repo

CHUNK = 500
DEFAULT_SCORER_TIMEOUT_S = 3600.0
LOCALIZATION = GraderSpec(id="localization")


@dataclass(frozen=True)
class SavedCase:
    """One ``ok`` (case, sample) of a saved run: the case with its gold, the trace, and the
    run's own scores for it."""

    case: Case
    sample: int
    trace: Trace
    scores: list[Score]


def saved_cases(ctx: Context, run: repo.RunRow, sample: int) -> Iterator[SavedCase | SkippedCase]:
    """The run's results of one ``sample`` in dataset order, a chunk at a time: a
    :class:`SavedCase` for each ``ok`` result, a :class:`SkippedCase` for the others."""
    after: tuple[int, int] | None = None
    while True:
        with ctx.engine.connect() as conn:
            rows = repo.result_page(conn, run.id, after, CHUNK, with_trace=True)
            if not rows:
                return
            first, last = rows[0].position, rows[-1].position
            page = dataset_repo.case_page(conn, run.dataset_pk, first - 1, last - first + 1)
            scores = repo.scores_of(conn, run.scorecard_id) if run.scorecard_id else {}
        cases = {p: body for p, _, body in page}
        for r in rows:
            if r.sample != sample:
                continue
            if r.status != "ok":
                yield SkippedCase(case_id=r.case_id, sample=r.sample, reason=f"status {r.status}")
                continue
            _, score_json, _ = scores.get((r.case_id, r.sample), (None, "[]", None))
            yield SavedCase(
                case=Case.model_validate_json(cases[r.position]),
                sample=r.sample,
                trace=traces.load_trace(ctx.settings, r.trace, r.trace_path),
                scores=[Score.model_validate(s) for s in orjson.loads(score_json)],
            )
        after = (rows[-1].position, rows[-1].sample)


def mirror_of(ctx: Context, case: Case) -> Path | None:
    """The case repository's mirror in the cache, None when it is not there."""
    from benchbook.services.run_execution import runtime_config

    source = getattr(case.env, "source", None)
    if not isinstance(source, GitSource):
        return None
    try:
        mirror = mirror_path(runtime_config(ctx.settings).mirrors, source.git)
    except RepoError:
        return None
    return mirror if (mirror / "HEAD").is_file() else None


def export_localization_run(ctx: Context, run_id: str, sample: int = 0) -> LocalizationExport:
    """The upstream ContextBench scorer's gold and prediction rows for a saved run
    (LOCALIZATION §5; shapes in :class:`LocalizationExport`).

    ``repo_url`` is a plain repository made from the case's local mirror
    (``BENCHBOOK_HOME/contextbench/repos/<host>/<owner>/<name>``,
    :mod:`benchbook.eval.scorer_repos`): the scorer uses it in place, without network and
    without cloning; a repository missing from the cache keeps its URL and a warning says so.
    Cases whose result is not ``ok``, without gold, or not in a git repository are listed in
    ``skipped``.

    Args:
        run_id: the run.
        sample: which repeat to export (upstream takes one row per instance).

    Raises:
        Forbidden: without ``runs:read``.
        NotFound: unknown run or another workspace's.
    """
    ctx.require("runs:read")
    export, _ = _collect(ctx, run_id, sample, with_scores=False)
    return export


def _collect(
    ctx: Context, run_id: str, sample: int, with_scores: bool
) -> tuple[LocalizationExport, dict[str, Score]]:
    """The export and, ``with_scores``, our localization score per exported case id (the
    run's own, else the grader applied now with the base commit from the mirror cache), in
    one pass over the saved traces."""
    from benchbook.services.run_execution import runtime_config

    export = LocalizationExport(run_id=run_id, sample=sample)
    ours: dict[str, Score] = {}
    mirrors = runtime_config(ctx.settings).mirrors
    with ctx.engine.connect() as conn:
        run = load_run(conn, ctx, run_id)
    for item in saved_cases(ctx, run, sample):
        if isinstance(item, SkippedCase):
            export.skipped.append(item)
            continue
        case = item.case
        source = getattr(case.env, "source", None)
        if not isinstance(source, GitSource):
            export.skipped.append(_skip(item, "not a git repository environment"))
            continue
        mirror = mirror_of(ctx, case)
        try:
            base = Checkout.from_git(mirror, source.ref) if mirror is not None else None
            gold = gold_spans(case, base)
        except (ValueError, InvalidInput) as exc:
            export.skipped.append(_skip(item, f"no usable gold: {exc}"))
            continue
        repo_url = _repo_url(ctx, case.id, source, mirror, export.warnings)
        submission = Submission(item.trace.answer, item.trace, mirrors=mirrors)
        export.gold.append(upstream.gold_row(case, gold, repo_url))
        export.predictions.append(
            upstream.prediction_row(case, submitted_prediction(submission), repo_url)
        )
        if with_scores:
            own = [s for s in item.scores if s.grader == "localization" and s.status == "ok"]
            ours[case.id] = own[0] if own else grade_localization(LOCALIZATION, submission, case)
    return export, ours


def _repo_url(
    ctx: Context, case_id: str, source: GitSource, mirror: Path | None, warnings: list[str]
) -> str:
    """What the scorer clones: the scorer repository of the case's mirror
    (:func:`~benchbook.eval.scorer_repos.scorer_repository`), else the URL with a warning."""
    from benchbook.services.run_execution import runtime_config

    if mirror is None:
        warnings.append(f"{case_id}: no mirror of {source.git} in the cache")
        return source.git
    try:
        repository = scorer_repository(
            mirror,
            runtime_config(ctx.settings).mirrors,
            ctx.settings.home / "contextbench" / "repos",
        )
    except ScorerRepoError as exc:
        warnings.append(f"{case_id}: {exc}")
        return source.git
    if not has_commit(repository, source.ref):
        warnings.append(f"{case_id}: commit {source.ref} is not in the mirror of {source.git}")
    return str(repository)


def _skip(item: SavedCase, reason: str) -> SkippedCase:
    return SkippedCase(case_id=item.case.id, sample=item.sample, reason=reason)


def score_localization_upstream(
    ctx: Context,
    run_id: str,
    scorer_cmd: str | None = None,
    sample: int = 0,
    timeout_s: float = DEFAULT_SCORER_TIMEOUT_S,
) -> UpstreamComparison:
    """Run the user-installed upstream ContextBench scorer on a saved run and put its numbers
    beside ours, per instance, flagging every metric that differs (LOCALIZATION §5).

    The scorer runs as ``SCORER_CMD --gold G --pred P --cache C --out O`` in a fresh temporary
    directory (its ``HOME``; ``CONTEXTBENCH_TMP_ROOT`` inside it, removed afterwards) with the
    cache ``BENCHBOOK_HOME/contextbench/cache`` kept between calls. Ours is the run's own
    ``localization`` score, or — when the run's plan did not have it — the grader applied now
    to the saved trace with the base commit from the mirror cache. A scorer failure (exit
    status, timeout, no ``--out``, malformed lines) is reported in the result, never raised.

    Args:
        run_id: the run.
        scorer_cmd: the scorer command line, e.g. ``python -m contextbench.evaluate``; default
            the setting ``contextbench_scorer_cmd``. Only installation admins may pass one.
        sample: which repeat to score.
        timeout_s: the scorer's wall-time limit in seconds (its process group is killed).

    Raises:
        Forbidden: without ``runs:read``, or a ``scorer_cmd`` from a caller who is not an
            installation admin.
        InvalidInput: no scorer command configured or given, or one that does not parse.
        NotFound: unknown run or another workspace's.
    """
    ctx.require("runs:read")
    if timeout_s <= 0:
        raise InvalidInput("timeout_s must be positive", {"timeout_s": timeout_s})
    # The run first: an unknown run is 404 whatever the rest of the request says.
    export, ours = _collect(ctx, run_id, sample, with_scores=True)
    command = _scorer_command(ctx, scorer_cmd)
    base = ctx.settings.home / "contextbench"
    base.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="scorer-", dir=base))
    try:
        gold, pred, out = work / "gold.jsonl", work / "pred.jsonl", work / "scores.jsonl"
        upstream.write_jsonl(export.gold, gold)
        upstream.write_jsonl(export.predictions, pred)
        try:
            argv = upstream.scorer_argv(command, gold, pred, base / "cache", out)
        except ValueError as exc:
            raise InvalidInput(f"scorer_cmd: {exc}", {"scorer_cmd": command}) from exc
        outcome = upstream.run_scorer(argv, work, base / "cache", out, timeout_s)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result = UpstreamComparison(
        run_id=run_id,
        argv=argv,
        returncode=outcome.returncode,
        error=outcome.error,
        problems=outcome.problems,
        stderr_tail=outcome.stderr_tail,
        duration_ms=outcome.duration_ms,
        skipped=export.skipped,
        warnings=export.warnings,
    )
    for row in export.predictions:
        iid = str(row["instance_id"])
        result.instances.append(_compare(iid, ours.get(iid), outcome.rows.get(iid)))
    result.agreeing = sum(1 for i in result.instances if i.agree)
    result.differing = len(result.instances) - result.agreeing
    return result


def _scorer_command(ctx: Context, scorer_cmd: str | None) -> str:
    if scorer_cmd is not None and not ctx.principal.can_publish_shared:
        raise Forbidden(
            "only installation admins may pass scorer_cmd (it runs on the server); set"
            " BENCHBOOK_CONTEXTBENCH_SCORER_CMD instead",
            {"action": "scorer_cmd"},
        )
    command = scorer_cmd if scorer_cmd is not None else ctx.settings.contextbench_scorer_cmd
    if not command or not command.strip():
        raise InvalidInput(
            "no scorer command: pass scorer_cmd (e.g. 'python -m contextbench.evaluate') or set"
            " BENCHBOOK_CONTEXTBENCH_SCORER_CMD",
            {"scorer_cmd": None},
        )
    return command


def _compare(iid: str, ours: Score | None, row: dict[str, Any] | None) -> InstanceComparison:
    item = InstanceComparison(instance_id=iid)
    if ours is None or ours.status != "ok":
        reason = "not scored" if ours is None else str(ours.detail.get("reason") or ours.detail)
        item.ours_error = reason
    else:
        item.ours = dict(ours.detail)
    if row is None:
        item.upstream_error = "no row"
    elif "error" in row:
        item.upstream, item.upstream_error = row, str(row["error"])
    else:
        item.upstream = row
    if item.ours is not None and item.upstream is not None and item.upstream_error is None:
        item.differences = [
            MetricDifference.model_validate(d) for d in upstream.differences(item.ours, row or {})
        ]
        item.agree = not item.differences
    elif ours is not None and item.upstream_error is not None:
        # both report the same error row (no_context_extracted): they agree
        item.agree = ours.detail.get("error") == item.upstream_error
    return item
