"""Runs through the services (SPEC H.4–H.8) with python harnesses, on SQLite and PostgreSQL.

The harnesses in ``tests/eval/harnesses/agents.py`` answer from the task alone.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from benchbook.contracts import Dataset
from benchbook.contracts.dataset import GraderSpec
from benchbook.contracts.run import RunSettings, StartRunRequest
from benchbook.errors import Conflict, Forbidden, InvalidInput, NotFound
from benchbook.services import datasets as ds
from benchbook.services import harnesses, run_execution, run_results, runs, scorecards
from benchbook.services.context import Context, local_admin_context
from benchbook.services.run_worker import RunWorker
from benchbook.settings import Settings
from benchbook.store import run_results as store_results
from tests.services.test_accounts import make_team

N_CASES = 12


def arithmetic(dataset_id: str = "sums", version: str = "1.0.0", n: int = N_CASES) -> Dataset:
    """``n`` cases ``c0..c{n-1}``: task ``What is i+1?``, expected ``i+1``, numeric grading;
    even cases tagged ``even``."""
    cases = [
        {
            "id": f"c{i}",
            "env": {"kind": "prompt"},
            "task": f"What is {i}+1?",
            "expected": str(i + 1),
            "graders": [{"id": "numeric"}],
            "tags": ["even"] if i % 2 == 0 else [],
        }
        for i in range(n)
    ]
    return Dataset.model_validate({"id": dataset_id, "version": version, "cases": cases})


def python_harness(
    ctx: Context, function: str, harness_id: str | None = None, module: str = "agents"
) -> str:
    """Register ``tests.eval.harnesses.<module>:<function>`` as harness ``<id>@1.0.0`` (id:
    ``harness_id``, else the function's name with dashes)."""
    hid = harness_id or function.replace("_", "-")
    payload = {
        "id": hid,
        "version": "1.0.0",
        "kind": "python",
        "config": {"callable": f"tests.eval.harnesses.{module}:{function}"},
    }
    harnesses.register_harness(ctx, harnesses.parse_harness(payload))
    return f"{hid}@1.0.0"


@pytest.fixture
def rctx(engine: Engine, settings: Settings, tmp_path: Path) -> Context:
    """The local admin with a pricing table that knows ``test-model`` ($1 per M input)."""
    table = {
        "as_of": "2026-12-01",
        "source": "test",
        "models": {"test-model": {"input_per_mtok_usd": 1.0, "output_per_mtok_usd": 2.0}},
    }
    (tmp_path / "pricing.json").write_text(json.dumps(table))
    tuned = settings.model_copy(
        update={"pricing_file": tmp_path / "pricing.json", "work_root": tmp_path / "work"}
    )
    return local_admin_context(engine, tuned)


def start(ctx: Context, harness: str, dataset: str = "sums", **settings: Any) -> Any:
    graders = settings.pop("graders", None)
    request = StartRunRequest(
        dataset=dataset,
        harness=harness,
        graders=graders,
        settings=RunSettings.model_validate(settings),
    )
    return runs.start_run(ctx, request)


def run_to_end(ctx: Context, harness: str, dataset: str = "sums", **settings: Any) -> Any:
    run = start(ctx, harness, dataset, **settings)
    return run_execution.execute_run(ctx, run.id)


def test_a_run_grades_every_case_and_its_scorecard_counts_them(rctx: Context) -> None:
    ds.register_dataset(rctx, arithmetic())
    run = run_to_end(rctx, python_harness(rctx, "explode"), concurrency=3)
    assert run.status == "finished"
    failing = {"c1", "c11"}  # ``explode`` raises on ids ending in 1
    assert (run.counts.done, run.counts.error, run.counts.passed) == (12, 2, 10)
    card = scorecards.get_scorecard(rctx, run.scorecard_id)
    assert (card.n, card.passed, card.errors, card.pass_rate) == (12, 10, 2, 10 / 12)
    results = {r.case_id: r for r in run_results.list_run_results(rctx, run.id)}
    assert {k for k, r in results.items() if r.status == "error"} == failing
    assert results["c1"].error == "ValueError: cannot do c1" and results["c1"].passed is False
    assert results["c4"].scores[0].metric == "numeric" and results["c4"].answer == "5"
    assert run_results.get_run_trace(rctx, run.id, "c4").answer == "5"


def test_results_page_in_dataset_order_with_a_cursor(rctx: Context) -> None:
    ds.register_dataset(rctx, arithmetic())
    run = run_to_end(rctx, python_harness(rctx, "add"), concurrency=5)
    first = run_results.list_run_results(rctx, run.id, limit=5)
    assert [r.case_id for r in first] == ["c0", "c1", "c2", "c3", "c4"]
    rest = run_results.list_run_results(rctx, run.id, after="4:0", limit=100)
    assert [r.case_id for r in rest] == [f"c{i}" for i in range(5, 12)]
    with pytest.raises(InvalidInput, match="after"):
        run_results.list_run_results(rctx, run.id, after="x:y")


def test_a_subset_selects_ids_then_tags_then_a_limit(rctx: Context) -> None:
    ds.register_dataset(rctx, arithmetic())
    harness = python_harness(rctx, "add")
    run = run_to_end(rctx, harness, tags=["even"], limit=3)
    assert [r.case_id for r in run_results.list_run_results(rctx, run.id)] == ["c0", "c2", "c4"]
    run = run_to_end(rctx, harness, case_ids=["c7", "c3"])
    assert [r.case_id for r in run_results.list_run_results(rctx, run.id)] == ["c3", "c7"]


def test_repeats_give_pass_at_k_and_pass_hat_k(rctx: Context) -> None:
    ds.register_dataset(rctx, arithmetic(n=4))
    run = run_to_end(rctx, python_harness(rctx, "add_wrong_on_odd_samples"), repeats=3)
    card = scorecards.get_scorecard(rctx, run.scorecard_id)
    # every case: samples 0 and 2 right, sample 1 wrong → n=3, c=2 per case
    assert (card.n, card.passed) == (12, 8)
    assert card.pass_at_k["1"] == pytest.approx(2 / 3)
    assert card.pass_at_k["2"] == pytest.approx(1.0)  # 1 - C(1,2)/C(3,2) = 1
    assert card.pass_hat_k["2"] == pytest.approx(1 / 3)  # C(2,2)/C(3,2)
    assert card.pass_hat_k["3"] == pytest.approx(0.0)


def test_the_budget_stops_new_cases_and_the_rest_are_not_run(rctx: Context) -> None:
    ds.register_dataset(rctx, arithmetic())
    run = run_to_end(rctx, python_harness(rctx, "priced"), concurrency=1, budget_usd=3.0)
    assert run.status == "budget_exhausted"
    assert (run.counts.done, run.counts.not_run) == (3, 9)  # $1 each: the 4th never starts
    assert run.spent_usd == pytest.approx(3.0)
    card = scorecards.get_scorecard(rctx, run.scorecard_id)
    assert (card.n, card.not_run, card.cost_usd) == (3, 9, pytest.approx(3.0))


def test_rescoring_makes_a_new_scorecard_and_leaves_the_first_unchanged(rctx: Context) -> None:
    ds.register_dataset(rctx, arithmetic())
    run = run_to_end(rctx, python_harness(rctx, "add"))
    first = scorecards.get_scorecard(rctx, run.scorecard_id)
    strict = GraderSpec(id="regex", config={"pattern": "^[0-9]$"})  # one digit only
    card = scorecards.rescore_run(rctx, run.id, [strict])
    assert card.rescore_of == first.id and card.plan_hash != first.plan_hash
    assert (first.passed, card.passed) == (12, 9)  # 10, 11, 12 have two digits
    assert scorecards.get_scorecard(rctx, first.id) == first
    assert [c.id for c in scorecards.list_scorecards(rctx, run.id)] == [first.id, card.id]


def test_retry_reruns_only_the_errored_cases(rctx: Context) -> None:
    ds.register_dataset(rctx, arithmetic())
    run = run_to_end(rctx, python_harness(rctx, "explode"))
    assert run.counts.error == 2
    again = runs.retry_run(rctx, run.id)
    assert (again.status, again.counts.done) == ("queued", 10)
    done = run_execution.execute_run(rctx, run.id)
    assert (done.status, done.counts.done, done.counts.error) == ("finished", 12, 2)


def test_a_cancelled_queued_run_never_executes(rctx: Context) -> None:
    ds.register_dataset(rctx, arithmetic())
    run = start(rctx, python_harness(rctx, "add"))
    assert runs.cancel_run(rctx, run.id).status == "cancelled"
    assert run_execution.execute_run(rctx, run.id).counts.done == 0


def test_a_worker_executes_queued_runs(rctx: Context) -> None:
    ds.register_dataset(rctx, arithmetic())
    run = start(rctx, python_harness(rctx, "add"))
    worker = RunWorker(rctx.engine, rctx.settings)
    assert worker.poll_once() is True
    assert runs.get_run(rctx, run.id).status == "finished"
    assert worker.poll_once() is False


@pytest.mark.parametrize(
    ("change", "error", "match"),
    [
        ({"graders": [GraderSpec(id="nope")]}, InvalidInput, "known: .*numeric"),
        ({"harness": "missing@1.0.0"}, NotFound, "missing"),
        ({"dataset": "sums@9.9.9"}, NotFound, r"sums@9\.9\.9"),
        ({"case_ids": ["zz"]}, Conflict, "zz"),
        ({"tags": ["none-such"]}, Conflict, "selects no case"),
    ],
)
def test_bad_run_requests_are_clear_errors_and_store_nothing(
    rctx: Context, change: dict[str, Any], error: type[Exception], match: str
) -> None:
    ds.register_dataset(rctx, arithmetic())
    change = dict(change)  # parametrize shares the dict between backends
    harness = change.pop("harness", python_harness(rctx, "add"))
    dataset = change.pop("dataset", "sums")
    with pytest.raises(error, match=match):
        start(rctx, harness, dataset, **change)
    assert runs.list_runs(rctx) == []


def test_a_tombstoned_dataset_version_cannot_be_run(rctx: Context) -> None:
    ds.register_dataset(rctx, arithmetic())
    ds.register_dataset(rctx, arithmetic(version="1.1.0"))
    ds.delete_dataset_version(rctx, "sums", "1.0.0")
    with pytest.raises(NotFound, match=r"sums@1\.0\.0"):
        start(rctx, python_harness(rctx, "add"), "sums@1.0.0")


@pytest.mark.parametrize(
    "settings", [{"concurrency": 0}, {"budget_usd": -1}, {"repeats": 0}, {"limit": 0}]
)
def test_out_of_range_settings_are_rejected(settings: dict[str, Any]) -> None:
    from benchbook.services.validation import parse_model

    with pytest.raises(InvalidInput, match=next(iter(settings))):
        parse_model(RunSettings, settings, "run settings")


def test_viewers_read_runs_members_start_them_and_other_workspaces_see_nothing(
    ctx: Context,
) -> None:
    team = make_team(ctx)
    ds.register_dataset(team.admin, arithmetic())
    harness = python_harness(ctx, "add")  # _shared? no: the local admin's own workspace
    harnesses.register_harness(ctx, harnesses.get_harness(ctx, "add", "1.0.0"), shared=True)
    with pytest.raises(Forbidden):
        start(team.viewer, harness)
    run = start(team.member, harness)
    assert runs.get_run(team.viewer, run.id).id == run.id
    with pytest.raises(NotFound):
        runs.get_run(team.outsider, run.id)
    with pytest.raises(NotFound):
        runs.cancel_run(team.outsider, run.id)
    assert runs.list_runs(team.outsider) == []


def test_resume_refuses_a_run_a_live_process_is_executing(rctx: Context) -> None:
    ds.register_dataset(rctx, arithmetic())
    run = runs.create_run(
        rctx,
        StartRunRequest(dataset="sums", harness=python_harness(rctx, "add")),
        holder=run_execution.worker_id(),  # this very process: alive
    )
    with pytest.raises(Conflict, match="executing"):
        runs.resume_run(rctx, run.id)


def test_large_traces_are_kept_as_files_checked_by_their_sha256(
    engine: Engine, settings: Settings, tmp_path: Path
) -> None:
    small = settings.model_copy(update={"trace_file_bytes": 64, "work_root": tmp_path / "w"})
    ctx = local_admin_context(engine, small)
    ds.register_dataset(ctx, arithmetic(n=2))
    run = run_to_end(ctx, python_harness(ctx, "add"))
    files = sorted((small.home / "traces").rglob("*.json.gz"))
    assert len(files) == 2  # each trace JSON is over 64 bytes
    assert run_results.get_run_trace(ctx, run.id, "c1").answer == "2"
    files[0].write_bytes(files[1].read_bytes())  # the first file now holds the other trace
    with pytest.raises(Exception, match="does not match its sha256"):
        for case_id in ("c0", "c1"):
            run_results.get_run_trace(ctx, run.id, case_id)


def test_the_dataset_timeline_shows_the_run_with_its_status_and_pass_rate(rctx: Context) -> None:
    ds.register_dataset(rctx, arithmetic())
    run = run_to_end(rctx, python_harness(rctx, "explode"))
    items = ds.get_dataset_activity(rctx, "sums").items
    item = next(i for i in items if i.kind == "run")
    assert item.details["run_id"] == run.id and item.details["harness"] == "explode@1.0.0"
    assert (item.details["status"], item.details["pass_rate"]) == ("finished", 10 / 12)
    assert (item.details["done"], item.details["total"]) == (12, 12)


def test_runs_and_rescores_work_from_code_already_inside_an_event_loop(rctx: Context) -> None:
    """A notebook (or Playwright's sync API) runs an event loop in the calling thread;
    ``execute_run`` and ``rescore_run`` still finish (red before: ``asyncio.run() cannot be
    called from a running event loop`` and the run marked failed)."""
    ds.register_dataset(rctx, arithmetic(n=3))
    harness = python_harness(rctx, "add")

    async def notebook_cell() -> tuple[Any, Any]:
        run = run_to_end(rctx, harness)
        card = scorecards.rescore_run(
            rctx, run.id, [GraderSpec(id="regex", config={"pattern": "^1$"})]
        )
        return run, card

    run, card = asyncio.run(notebook_cell())
    assert (run.status, run.counts.passed) == ("finished", 3)
    assert card.passed == 1


@pytest.mark.parametrize(("grader", "verdicts"), [("localization", 0), ("numeric", 4)])
def test_the_live_counts_and_the_stored_ones_say_whether_a_grader_gave_verdicts(
    rctx: Context, grader: str, verdicts: int
) -> None:
    """What ``rated`` reads while a run executes (the CLI's live "pass …") and afterwards (a
    run's ``pass_rate`` before its scorecard exists): ok results that got a pass/fail."""
    ds.register_dataset(rctx, arithmetic(n=4))
    run = start(rctx, python_harness(rctx, "add"), graders=[{"id": grader}])
    seen: list[dict[str, int]] = []
    done = run_execution.execute_run(rctx, run.id, lambda c, _spent: seen.append(dict(c)))
    assert (seen[-1]["ok"], seen[-1]["verdicts"]) == (4, verdicts)
    with rctx.engine.connect() as conn:
        assert store_results.counts(conn, run.id)["verdicts"] == verdicts
    assert (done.pass_rate is None) == (verdicts == 0)
    assert runs.rated(4, 4, seen[-1]["verdicts"]) == (verdicts > 0)
