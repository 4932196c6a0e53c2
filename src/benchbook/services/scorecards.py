"""Scorecard operations (SPEC H.6, H.8): read a run's scorecards and rescore a saved run.

A run's own scorecard is created with the run and filled as results are written; its summary
(pass rate with the Wilson interval, pass@k/pass^k, metrics, tokens, cost, latency) is computed
when the run ends. ``rescore_run`` grades the stored traces again under another plan without
calling the harness: a new scorecard linked to the same traces; the first one is unchanged.
Judge verdicts come from the verdict cache when the judge spec and its input are unchanged.
"""

from __future__ import annotations

import asyncio
import secrets as random_source
from collections.abc import Iterator, Sequence
from typing import Any

import orjson
from sqlalchemy import Connection

from benchbook.contracts.dataset import Case, GraderSpec
from benchbook.contracts.run import CaseResult, RunPlan, RunSettings, Usage
from benchbook.contracts.score import Score
from benchbook.contracts.scorecard import Scorecard
from benchbook.datasets.versions import clean_version_tags
from benchbook.errors import Conflict, InvalidInput, NotFound
from benchbook.eval.grading import (
    Grading,
    Submission,
    decide_passed,
    grade_submission,
    grader_error_of,
)
from benchbook.eval.plan_checks import check_plan
from benchbook.eval.plans import plan_hash
from benchbook.eval.pricing import load_pricing
from benchbook.eval.scorecards import ScorecardBuilder
from benchbook.eval.sync import run_sync
from benchbook.services import traces
from benchbook.services.code_rules import CodeCheck
from benchbook.services.context import Context
from benchbook.services.masking import mask_json_text, masked_values
from benchbook.services.preflight import preflight_plan
from benchbook.services.run_secrets import LazySecrets
from benchbook.services.run_views import load_run
from benchbook.services.runtime_settings import runtime_config
from benchbook.services.verdict_cache import StoreVerdictCache
from benchbook.services.verdicts import store_verdicts
from benchbook.settings import Settings
from benchbook.store import result_pages
from benchbook.store import runs as repo
from benchbook.store import scorecards as card_repo
from benchbook.store.case_reads import case_page
from benchbook.store.engine import advisory_lock
from benchbook.store.scorecard_tags import tag_holders

ID_PREFIXES = ("sc_", "run_")
"""Prefixes of scorecard and run ids; tags may not start with them."""
RESCORE_CONCURRENCY = 8
RESCORE_CHUNK = 500


def _results(
    conn: Connection, run_id: str, scorecard_id: str
) -> Iterator[tuple[CaseResult, Usage, str | None]]:
    """The run's results with one scorecard's scores (no traces), their token usage and the
    agent limit that ended each (None: none did)."""
    scores = card_repo.scores_of(conn, scorecard_id)
    for r in result_pages.iter_results(conn, run_id):
        passed, score_json, grader_error = scores.get((r.case_id, r.sample), (r.passed, "[]", None))
        result = CaseResult(
            case_id=r.case_id,
            sample=r.sample,
            status=r.status,
            error=r.error,
            answer=r.answer,
            passed=passed if r.status != "not_run" else None,
            grader_error=grader_error if r.status == "ok" else None,
            scores=[Score.model_validate(s) for s in orjson.loads(score_json)],
            cost_usd=r.cost_usd,
            duration_ms=r.duration_ms,
        )
        usage = Usage(input_tokens=r.input_tokens, output_tokens=r.output_tokens)
        yield result, usage, r.agent_limit


def summarize(
    conn: Connection,
    run: repo.RunRow,
    scorecard_id: str,
    pricing_sha: str | None,
) -> Scorecard:
    """Compute a scorecard's summary from the stored results and scores."""
    head = card_repo.get_scorecard(conn, scorecard_id)
    assert head is not None
    settings = RunSettings.model_validate_json(run.settings)
    builder = ScorecardBuilder(repeats=settings.repeats)
    for result, usage, limit in _results(conn, run.id, scorecard_id):
        builder.add(result, usage, limit)
    return Scorecard(
        id=scorecard_id,
        run_id=run.id,
        plan=RunPlan.model_validate_json(head.plan),
        plan_hash=head.plan_hash,
        dataset=f"{run.dataset_id}@{run.dataset_version}",
        dataset_content_hash=run.dataset_content_hash,
        harness=run.harness_ref,
        rescore_of=head.rescore_of,
        repeats=settings.repeats,
        pricing_sha256=pricing_sha,
        created_by=head.created_by,
        created_at=head.created_at,
        **builder.summary(),
    )


def finalize(
    conn: Connection,
    settings: Settings,
    run: repo.RunRow,
    scorecard_id: str | None,
    pricing_sha: str | None,
) -> Scorecard | None:
    """Compute and store a scorecard's summary (called when a run ends)."""
    if scorecard_id is None:
        return None
    card = summarize(conn, run, scorecard_id, pricing_sha)
    card_repo.set_scorecard_summary(conn, scorecard_id, card.model_dump_json())
    store_verdicts(conn, run, scorecard_id)  # an ended run's (a rescore): compared as one row
    return card


def load_scorecard(conn: Connection, ctx: Context, scorecard_id: str) -> tuple[Any, repo.RunRow]:
    """The scorecard header and its run, both of the caller's workspace.

    Raises:
        NotFound: unknown id, or the scorecard of another workspace's run.
    """
    head = card_repo.get_scorecard(conn, scorecard_id)
    run = repo.get_run(conn, head.run_id, ctx.workspace) if head is not None else None
    if head is None or run is None:
        raise NotFound(f"scorecard {scorecard_id!r} not found", {"id": scorecard_id})
    return head, run


def read_scorecard(conn: Connection, head: Any, run: repo.RunRow) -> Scorecard:
    """The stored summary (a running run's computed on the fly) with the current tags."""
    card = (
        Scorecard.model_validate_json(head.summary)
        if head.summary is not None
        else summarize(conn, run, head.id, None)
    )
    card.tags = card_repo.scorecard_tags_of(conn, [head.id]).get(head.id, [])
    return card


def get_scorecard(ctx: Context, scorecard_id: str) -> Scorecard:
    """One scorecard with its tags; a running run's own scorecard is computed on the fly.

    Raises:
        NotFound: unknown id, or the scorecard of another workspace's run.
    """
    ctx.require("runs:read")
    with ctx.engine.connect() as conn:
        head, run = load_scorecard(conn, ctx, scorecard_id)
        return read_scorecard(conn, head, run)


def list_scorecards(ctx: Context, run_id: str) -> list[Scorecard]:
    """A run's scorecards, its own first, then rescores oldest first."""
    ctx.require("runs:read")
    with ctx.engine.connect() as conn:
        run = load_run(conn, ctx, run_id)
        return [read_scorecard(conn, h, run) for h in card_repo.scorecards_of(conn, run_id)]


def tags_of_scorecards(ctx: Context, scorecard_ids: list[str]) -> dict[str, list[str]]:
    """``{scorecard_id: [tag, …]}`` of the workspace's scorecards among ``scorecard_ids`` (at
    most 500; untagged and other workspaces' ids absent). Not an operation: the runs list's
    tag column, one query for a page of runs."""
    ctx.require("runs:read")
    if len(scorecard_ids) > 500:
        raise InvalidInput("at most 500 scorecard ids", {"scorecard_ids": len(scorecard_ids)})
    with ctx.engine.connect() as conn:
        return card_repo.scorecard_tags_of_workspace(conn, ctx.workspace, scorecard_ids)


def clean_scorecard_tags(tags: list[str]) -> list[str]:
    """Trimmed, de-duplicated tags under the version-tag rules of SPEC B (1–60 chars, ≤ 20, not
    ``latest``, not SemVer), and never shaped like a scorecard or run id (``sc_…``,
    ``run_…``), so a baseline reference is never ambiguous.

    Raises:
        InvalidInput: naming the offending tag.
    """
    cleaned = clean_version_tags(tags)
    for tag in cleaned:
        if tag.startswith(ID_PREFIXES):
            problem = f"tag {tag[:20]!r} looks like a scorecard or run id (sc_…, run_…)"
            raise InvalidInput(problem, {"errors": [{"path": "tags", "message": problem}]})
    return cleaned


def set_scorecard_tags(ctx: Context, scorecard_id: str, tags: list[str]) -> Scorecard:
    """Replace a scorecard's movable tags (``baseline``, ``prod``); a tag held by another
    scorecard of the same dataset id moves here. An empty list clears them.

    Only a ``finished`` run's scorecards can be tagged: a failed, cancelled, budget-exhausted
    or unfinished run never becomes a baseline.

    Raises:
        InvalidInput: a tag breaks the rules of :func:`clean_scorecard_tags`.
        NotFound: unknown scorecard, or another workspace's.
        Conflict: the scorecard's run is not ``finished``.
        Forbidden: the scorecard's run, or the run of a scorecard holding one of the tags, was
            started by another user and the caller is no admin (``runs:manage``).
    """
    ctx.require("runs:write")
    cleaned = clean_scorecard_tags(tags)
    with ctx.engine.begin() as conn:
        head, run = load_scorecard(conn, ctx, scorecard_id)
        ctx.require_own(run.created_by, "runs:manage", f"scorecard {scorecard_id} (run {run.id})")
        # Two writers of one dataset id's tags in turn (delete-then-insert raced, issue 32).
        advisory_lock(conn, f"scorecard_tags/{ctx.workspace}/{run.dataset_id}")
        for held in tag_holders(conn, ctx.workspace, run.dataset_id, cleaned):
            ctx.require_own(
                held.run_started_by, "runs:manage", f"tag {held.tag!r} of {held.scorecard_id}"
            )
        if run.status != "finished" and cleaned:
            raise Conflict(
                f"run {run.id} is {run.status}; only a finished run's scorecard can be tagged",
                {"id": scorecard_id, "run_id": run.id, "status": run.status},
            )
        card_repo.replace_scorecard_tags(
            conn, ctx.workspace, run.dataset_id, scorecard_id, cleaned, ctx.principal.user_id
        )
        return read_scorecard(conn, head, run)


def rescore_run(
    ctx: Context, run_id: str, graders: Sequence[GraderSpec], preflight: bool = True
) -> Scorecard:
    """Grade a finished run's saved traces under another plan, calling no harness (SPEC H.8).

    Workspace graders (``command``, ``tests-pass``) are ``skipped``: the case workspaces are
    gone; ``localization`` reads the base commit from the mirror cache instead. Judges reuse
    cached verdicts when their spec and input are unchanged.

    Args:
        graders: the new plan (at least one grader).
        preflight: ask each judge endpoint once before grading anything.

    Returns:
        The new scorecard (``rescore_of`` = the run's own scorecard); ``grader_errors`` counts
        the pairs whose grading could not decide.

    Raises:
        InvalidInput: no graders, unknown grader ids (the known ones listed), an unknown config
            key (named, the closest known key suggested), a judge without base_url/model.
        UpstreamError: with ``preflight``, a judge endpoint did not answer (URL and cause).
        Conflict: the run has not ended yet.
        NotFound: unknown run or another workspace's.
    """
    ctx.require("runs:write")
    if not graders:
        raise InvalidInput("rescoring needs at least one grader", {"graders": []})
    with ctx.engine.connect() as conn:
        run = load_run(conn, ctx, run_id)  # first: an unknown run is 404 whatever the graders
        check_plan(graders)
        # Nothing executes (no workspace): only the judges' endpoints and secrets are checked.
        CodeCheck(ctx, conn, None, executes=False).plan(list(graders))
    if run.status in ("queued", "running"):
        raise Conflict(
            f"run {run_id} is {run.status}; rescore it once it has ended", {"id": run_id}
        )
    plan = RunPlan(graders=list(graders))
    if preflight:
        preflight_plan(ctx, plan.graders, None)
    secrets = LazySecrets(ctx.engine, ctx.settings, ctx.principal.user_id, ctx.workspace)
    pricing, _ = load_pricing(ctx.settings.pricing_file)
    verdicts = StoreVerdictCache(ctx.engine, run.workspace)
    grading = Grading(secrets=secrets, verdicts=verdicts, pricing=pricing)
    rows = run_sync(_regrade(ctx, run, plan.graders, grading))
    values = masked_values([*secrets.seen(), ctx.settings.hf_token])
    rows = [
        (c, s, p, mask_json_text(text, values), g and mask_json_text(g, values))
        for c, s, p, text, g in rows
    ]
    return store_scorecard(ctx, run, plan, rows)


def store_scorecard(
    ctx: Context, run: repo.RunRow, plan: RunPlan, rows: list[card_repo.ScoreRow]
) -> Scorecard:
    """Store a new scorecard of ``run`` (``rescore_of`` = the run's own) with ``rows`` of
    ``(case_id, sample, passed, scores JSON, grader_error)`` in one transaction, and return its
    summary.
    Not an operation: the core of :func:`rescore_run` and of importing a SWE-bench report."""
    card_id = "sc_" + random_source.token_hex(8)
    _, pricing_sha = load_pricing(ctx.settings.pricing_file)
    with ctx.engine.begin() as conn:
        card_repo.insert_scorecard(
            conn,
            id=card_id,
            run_id=run.id,
            plan=plan.model_dump_json(),
            plan_hash=plan_hash(plan),
            rescore_of=run.scorecard_id,
            created_by=ctx.principal.user_id,
        )
        card_repo.write_scores(conn, card_id, rows)
        finalize(conn, ctx.settings, run, card_id, pricing_sha)
        head = card_repo.get_scorecard(conn, card_id)
        assert head is not None and head.summary is not None
        return read_scorecard(conn, head, run)


async def _regrade(
    ctx: Context, run: repo.RunRow, graders: list[GraderSpec], grading: Grading
) -> list[card_repo.ScoreRow]:
    """New scores for every stored result, a chunk of results (and their cases) at a time."""
    slots = asyncio.Semaphore(RESCORE_CONCURRENCY)
    mirrors = runtime_config(ctx.settings).mirrors
    out: list[card_repo.ScoreRow] = []

    async def one(row: Any, case: Case) -> card_repo.ScoreRow:
        if row.status != "ok":
            passed = None if row.status == "not_run" else False
            return row.case_id, row.sample, passed, "[]", None
        async with slots:
            trace = traces.load_trace(ctx.settings, row.trace, row.trace_path)
            submission = Submission(trace.answer, trace, "ok", None, mirrors)
            scores = await grade_submission(graders, submission, case, grading)
        dumped = orjson.dumps([s.model_dump(mode="json") for s in scores]).decode()
        passed = decide_passed("ok", scores)
        return row.case_id, row.sample, passed, dumped, grader_error_of(scores)

    after: tuple[int, int] | None = None
    while True:
        with ctx.engine.connect() as conn:
            rows = result_pages.result_page(conn, run.id, after, RESCORE_CHUNK, with_trace=True)
            if not rows:
                return out
            first, last = rows[0].position, rows[-1].position
            page = case_page(conn, run.dataset_pk, first - 1, last - first + 1)
        cases = {p: Case.model_validate_json(body) for p, _, body in page}
        out += await asyncio.gather(*(one(r, cases[r.position]) for r in rows))
        after = (rows[-1].position, rows[-1].sample)
