"""Compare two scorecards (SPEC H.7): ``compare_scorecards``.

The baseline is a scorecard id (``sc_…``), a run id (``run_…``: its own scorecard) or a
scorecard **tag** (``baseline``, ``prod``) resolved on the candidate's dataset id; the candidate
is a scorecard or run id. Both must be of the caller's workspace and of the same dataset id.
The statistics live in :mod:`benchbook.eval.compare`.
"""

from __future__ import annotations

from sqlalchemy import Connection

from benchbook.contracts.comparison import Comparison
from benchbook.contracts.scorecard import Scorecard
from benchbook.errors import InvalidInput, NotFound
from benchbook.eval.compare import DEFAULT_RESAMPLES, DEFAULT_SEED, compare_outcomes, gc_paused
from benchbook.services.context import Context
from benchbook.services.scorecards import ID_PREFIXES, load_scorecard, read_scorecard
from benchbook.store import runs as repo

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


def _baseline_ref(conn: Connection, ctx: Context, ref: str, dataset_id: str) -> str:
    if ref.startswith(ID_PREFIXES):
        return ref
    found = repo.resolve_scorecard_tag(conn, ctx.workspace, dataset_id, ref)
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
        NotFound: an unknown scorecard, run or tag, or one of another workspace.
    """
    ctx.require("runs:read")
    if not 0 <= seed <= MAX_SEED:
        raise InvalidInput(f"seed must be between 0 and {MAX_SEED}", {"seed": seed})
    if not 1 <= resamples <= MAX_RESAMPLES:
        raise InvalidInput(
            f"resamples must be between 1 and {MAX_RESAMPLES:,}", {"resamples": resamples}
        )
    with ctx.engine.connect() as conn:
        cand, cand_run = _load(conn, ctx, candidate)
        base, base_run = resolve_baseline(conn, ctx, baseline, cand_run.dataset_id)
        if base_run.dataset_id != cand_run.dataset_id:
            raise InvalidInput(
                f"the baseline is a scorecard of {base.dataset} and the candidate of "
                f"{cand.dataset}: compare scorecards of the same dataset",
                {"baseline": base.dataset, "candidate": cand.dataset},
            )
        with gc_paused():  # 200k fetched tuples, then the pairing
            before = repo.outcomes_of(conn, base_run.id, base.id, base.id == base_run.scorecard_id)
            after = repo.outcomes_of(conn, cand_run.id, cand.id, cand.id == cand_run.scorecard_id)
            return compare_outcomes(base, cand, before, after, resamples=resamples, seed=seed)
