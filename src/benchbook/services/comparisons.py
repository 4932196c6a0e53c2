"""Compare two scorecards (SPEC H.7): ``compare_scorecards``.

The baseline is a scorecard id (``sc_…``), a run id (``run_…``: its own scorecard) or a
scorecard **tag** (``baseline``, ``prod``) resolved on the candidate's dataset id; the candidate
is a scorecard or run id. Both must be of the caller's workspace and of the same dataset id.
The statistics live in :mod:`benchbook.eval.compare`; each side's outcomes are its scorecard's
stored verdict vector (:mod:`benchbook.services.verdicts`), read from the rows and stored when
missing or out of date.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import orjson
from sqlalchemy import Connection

from benchbook.contracts.comparison import Comparison
from benchbook.contracts.run import CaseResult
from benchbook.contracts.score import Score
from benchbook.contracts.scorecard import Scorecard
from benchbook.errors import InvalidInput, NotFound
from benchbook.eval.compare import DEFAULT_RESAMPLES, DEFAULT_SEED, gc_paused
from benchbook.eval.verdicts import compare_verdicts
from benchbook.services.context import Context
from benchbook.services.runs import MAX_PAGE, TERMINAL
from benchbook.services.scorecards import ID_PREFIXES, load_scorecard, read_scorecard
from benchbook.services.verdicts import save_verdicts, verdicts_of
from benchbook.store import result_pages
from benchbook.store import runs as repo
from benchbook.store import scorecards as card_repo

MAX_RESAMPLES = 100_000
MAX_SEED = 2**32 - 1


def _scorecard_id(conn: Connection, ctx: Context, ref: str) -> str:
    """A scorecard id, or a run id's own scorecard id (NotFound for another workspace's)."""
    if ref.startswith("run_"):
        run = repo.get_run(conn, ref, ctx.workspace)
        if run is None or run.scorecard_id is None:
            raise NotFound(f"run {ref!r} not found", {"id": ref})
        return run.scorecard_id
    return ref


def _load(conn: Connection, ctx: Context, ref: str) -> tuple[Scorecard, repo.RunRow]:
    head, run = load_scorecard(conn, ctx, _scorecard_id(conn, ctx, ref))
    return read_scorecard(conn, head, run), run


def _load_candidate(conn: Connection, ctx: Context, ref: str) -> tuple[Scorecard, repo.RunRow]:
    """The candidate: a scorecard or run id only. A tag is never one of those (tags never start
    like an id), so an unknown ref that is not shaped like an id says where tags go."""
    try:
        return _load(conn, ctx, ref)
    except NotFound as exc:
        if ref.startswith(ID_PREFIXES):
            raise
        hint = "the candidate must be a scorecard or run id; only the baseline may be a tag"
        raise NotFound(f"{exc.message} ({hint})", exc.details) from exc


def _baseline_ref(conn: Connection, ctx: Context, ref: str, dataset_id: str) -> str:
    if ref.startswith(ID_PREFIXES):
        return ref
    found = card_repo.resolve_scorecard_tag(conn, ctx.workspace, dataset_id, ref)
    if found is None:
        raise NotFound(
            f"no scorecard of dataset {dataset_id!r} is tagged {ref!r}",
            {"dataset_id": dataset_id, "tag": ref},
        )
    return found


def resolve_baseline(
    conn: Connection, ctx: Context, ref: str, dataset_id: str
) -> tuple[Scorecard, repo.RunRow]:
    """A baseline reference (scorecard id, run id, or a scorecard tag of ``dataset_id``) →
    the scorecard and its run, both of the caller's workspace. Not an operation.

    Raises:
        NotFound: unknown scorecard, run or tag, or one of another workspace.
    """
    return _load(conn, ctx, _baseline_ref(conn, ctx, ref, dataset_id))


def compare_scorecards(
    ctx: Context,
    baseline: str,
    candidate: str,
    seed: int = DEFAULT_SEED,
    resamples: int = DEFAULT_RESAMPLES,
) -> Comparison:
    """Baseline vs candidate, pair by pair (SPEC H.7).

    Args:
        baseline: a scorecard id, a run id (its own scorecard) or a scorecard tag of the
            candidate's dataset id.
        candidate: a scorecard id or a run id.
        seed: seed of the paired bootstrap (0 – 2³²−1); reported with the interval.
        resamples: bootstrap resamples (1 – 100,000; default 10,000).

    Returns:
        The comparison (every pair's transition included); ``comparable`` False with reasons
        when the dataset content hashes or grader (plan) hashes differ.

    Raises:
        InvalidInput: seed or resamples out of range; the two scorecards are of different
            dataset ids.
        NotFound: an unknown scorecard, run or tag, or one of another workspace (a candidate
            that is not a scorecard or run id says only the baseline may be a tag).
    """
    ctx.require("runs:read")
    if not 0 <= seed <= MAX_SEED:
        raise InvalidInput(f"seed must be between 0 and {MAX_SEED}", {"seed": seed})
    if not 1 <= resamples <= MAX_RESAMPLES:
        raise InvalidInput(
            f"resamples must be between 1 and {MAX_RESAMPLES:,}", {"resamples": resamples}
        )
    with ctx.engine.connect() as conn:
        cand, cand_run = _load_candidate(conn, ctx, candidate)
        base, base_run = resolve_baseline(conn, ctx, baseline, cand_run.dataset_id)
        if base_run.dataset_id != cand_run.dataset_id:
            raise InvalidInput(
                f"the baseline is a scorecard of {base.dataset} and the candidate of "
                f"{cand.dataset}: compare scorecards of the same dataset",
                {"baseline": base.dataset, "candidate": cand.dataset},
            )
        key = _cache_key(base, base_run, cand, cand_run, seed, resamples)
        if key is not None and key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
        with gc_paused():  # up to 200k fetched tuples (sides without a stored vector)
            before, stale_before = verdicts_of(conn, base_run, base.id)
            after, stale_after = verdicts_of(conn, cand_run, cand.id)
        found = compare_verdicts(base, cand, before, after, resamples=resamples, seed=seed)
    sides = ((stale_before, base_run, base.id, before), (stale_after, cand_run, cand.id, after))
    stale = {card_id: (run, side) for is_stale, run, card_id, side in sides if is_stale}
    for card_id, (run, side) in stale.items():  # after the read: one writer on SQLite
        save_verdicts(ctx.engine, run, card_id, side)
    found = _with_origins(found, base_run, cand_run)
    if key is not None:
        _CACHE[key] = found
        while len(_CACHE) > CACHED_COMPARISONS:
            _CACHE.popitem(last=False)
    return found


def _with_origins(c: Comparison, base_run: repo.RunRow, cand_run: repo.RunRow) -> Comparison:
    """``c`` with each side's origin, and a note for each side not executed here (a reported
    baseline is never taken silently, whatever tag points at it) and when both sides are one
    scorecard."""
    notes = [
        f"the {side} was {run.origin} by {run.reported_by or 'unknown'} (run {run.id}), not"
        " executed by this server"
        for side, run in (("baseline", base_run), ("candidate", cand_run))
        if run.origin != "native"
    ]
    if c.baseline == c.candidate:  # e.g. the run just tagged ``baseline`` compared with its tag
        notes.append(
            f"the baseline and the candidate are the same scorecard ({c.baseline}): nothing"
            " can differ; compare another run against it"
        )
    return c.model_copy(
        update={
            "baseline_origin": base_run.origin,
            "candidate_origin": cand_run.origin,
            "notes": notes,
        }
    )


CACHED_COMPARISONS = 4
"""Comparisons of ended runs kept in this process (a 100k-pair one holds ~15 MB)."""
_CACHE: OrderedDict[tuple[Any, ...], Comparison] = OrderedDict()


def forget_comparisons() -> None:
    """Empty this process's cache of comparisons (benchmarks time the computation itself)."""
    _CACHE.clear()


def _cache_key(
    base: Scorecard,
    base_run: repo.RunRow,
    cand: Scorecard,
    cand_run: repo.RunRow,
    seed: int,
    resamples: int,
) -> tuple[Any, ...] | None:
    """What a comparison depends on, or None while a run has not ended (its results change).

    An ended run's results change only when it is queued again (resume, retry), which clears
    ``finished_at`` and sets a new one when it ends, so the key holds both runs' status and
    ``finished_at``; a scorecard's scores never change once written. Tags are resolved to ids
    before. Callers must not mutate the returned comparison (it is shared)."""
    if base_run.status not in TERMINAL or cand_run.status not in TERMINAL:
        return None
    stamps = (base_run.status, base_run.finished_at, cand_run.status, cand_run.finished_at)
    return (base.id, cand.id, seed, resamples, *stamps)


def list_dataset_scorecards(
    ctx: Context, dataset_id: str | None, limit: int = 50
) -> list[Scorecard]:
    """The scorecards of ``dataset_id``'s ended runs in the caller's workspace (rescores
    included), newest first, with their tags: what a baseline or candidate can be picked from.

    Args:
        dataset_id: a dataset id; None: every dataset's.
        limit: at most this many (1–500).

    Raises:
        InvalidInput: ``limit`` out of range.
    """
    ctx.require("runs:read")
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidInput(f"limit must be between 1 and {MAX_PAGE}", {"limit": limit})
    with ctx.engine.connect() as conn:
        found = repo.dataset_scorecards(conn, ctx.workspace, dataset_id, TERMINAL, limit)
        tags = card_repo.scorecard_tags_of(conn, [head.id for head, _ in found])
        cards = []
        for head, run in found:
            card = (
                Scorecard.model_validate_json(head.summary)
                if head.summary is not None
                else read_scorecard(conn, head, run)
            )
            card.tags = tags.get(head.id, [])
            cards.append(card)
    return cards


def list_paired_results(
    ctx: Context, comparison: Comparison, case_ids: list[str]
) -> dict[tuple[str, int], tuple[CaseResult | None, CaseResult | None]]:
    """Both sides' results (answer, status, scores under each scorecard, cost, latency; no
    traces) for a page of a comparison's case ids: ``(case_id, sample) → (baseline,
    candidate)``, None where a side has no result.

    Args:
        comparison: from :func:`compare_scorecards` (its runs and scorecards are read again).
        case_ids: at most 500 ids (every sample of each).

    Raises:
        InvalidInput: more than 500 ids.
        NotFound: a run or scorecard of the comparison is gone or of another workspace.
    """
    ctx.require("runs:read")
    if len(case_ids) > MAX_PAGE:
        raise InvalidInput(f"at most {MAX_PAGE} case ids at once", {"case_ids": len(case_ids)})
    out: dict[tuple[str, int], list[CaseResult | None]] = {}
    with ctx.engine.connect() as conn:
        sides = ((0, comparison.baseline), (1, comparison.candidate))
        for side, scorecard_id in sides:
            _, run = load_scorecard(conn, ctx, scorecard_id)
            own = scorecard_id == run.scorecard_id
            found = result_pages.results_for(conn, run.id, scorecard_id, own, case_ids)
            for key, row in found.items():
                out.setdefault(key, [None, None])[side] = _result(row)
    return {key: (pair[0], pair[1]) for key, pair in out.items()}


def _result(row: Any) -> CaseResult:
    """A stored result as a :class:`CaseResult` without validating it again (the columns and
    the scores JSON were validated when written; validation cost ~0.2 ms a result here)."""
    scores = orjson.loads(row.scores) if row.scores else []
    return CaseResult.model_construct(
        case_id=row.case_id,
        sample=row.sample,
        position=row.position,
        status=row.status,
        error=row.error,
        answer=row.answer,
        passed=row.passed if row.status != "not_run" else None,
        scores=[Score.model_construct(**s) for s in scores],
        cost_usd=row.cost_usd,
        duration_ms=row.duration_ms,
    )


def warm_comparisons() -> None:
    """Pay a fresh process's one-time costs of the first comparison before it is asked for:
    numpy's import and numpy.random's first bootstrap (~0.25 s of a fresh server's first
    100k-pair compare page on a quiet machine). Not an operation; no database access."""
    from benchbook.eval.compare import mcnemar_exact_p, paired_bootstrap

    paired_bootstrap({(1, 1): 3, (-1, 1): 2, (0, 1): 5}, resamples=50)
    mcnemar_exact_p(3, 2)
