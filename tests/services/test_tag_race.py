"""Issue 32: two writers setting the same version tag at once. The delete-then-insert of
``replace_tags`` raced on PostgreSQL (500 ``UniqueViolation`` on ``version_tags_pkey``); each
writer must end with the tag held by exactly one version, on SQLite and PostgreSQL."""

from __future__ import annotations

import threading
from typing import Any

from benchbook.contracts import Dataset
from benchbook.contracts.run import StartRunRequest
from benchbook.services import datasets as svc
from benchbook.services import run_execution, runs, scorecards
from benchbook.services.context import Context
from tests.eval.test_runs import arithmetic, python_harness

ROUNDS = 15
WRITERS = 4


def _register(ctx: Context, version: str) -> None:
    case = {"id": "q1", "env": {"kind": "prompt"}, "task": f"Capital? {version}"}
    svc.register_dataset(
        ctx, Dataset.model_validate({"id": "caps", "version": version, "cases": [case]})
    )


def test_concurrent_writers_of_the_same_tag_all_succeed_and_one_version_holds_it(
    ctx: Context,
) -> None:
    for version in ("1.0.0", "1.1.0"):
        _register(ctx, version)
    errors: list[BaseException] = []

    def write(version: str, barrier: threading.Barrier) -> None:
        barrier.wait(timeout=30)
        try:
            svc.set_dataset_version_tags(ctx, "caps", version, ["prod", "baseline"])
        except BaseException as exc:
            errors.append(exc)

    for _ in range(ROUNDS):
        barrier = threading.Barrier(WRITERS)
        threads = [
            threading.Thread(target=write, args=(("1.0.0", "1.1.0")[i % 2], barrier))
            for i in range(WRITERS)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert not any(t.is_alive() for t in threads)
    assert errors == []
    (item,) = svc.list_datasets(ctx).items
    tags: dict[str, Any] = item.version_tags
    assert set(tags) == {"prod", "baseline"}
    assert tags["prod"] == tags["baseline"]


def test_concurrent_writers_of_the_same_scorecard_tag_all_succeed(ctx: Context) -> None:
    """The same race on scorecard tags (``replace_scorecard_tags`` deletes then inserts too)."""
    svc.register_dataset(ctx, arithmetic("sums", n=1))
    harness = python_harness(ctx, "add")
    cards = []
    for _ in range(2):
        run = run_execution.execute_run(
            ctx, runs.start_run(ctx, StartRunRequest(dataset="sums", harness=harness)).id
        )
        assert run.scorecard_id is not None
        cards.append(run.scorecard_id)
    errors: list[BaseException] = []

    def write(card: str, barrier: threading.Barrier) -> None:
        barrier.wait(timeout=30)
        try:
            scorecards.set_scorecard_tags(ctx, card, ["baseline", "prod"])
        except BaseException as exc:
            errors.append(exc)

    for _ in range(ROUNDS):
        barrier = threading.Barrier(WRITERS)
        threads = [
            threading.Thread(target=write, args=(cards[i % 2], barrier)) for i in range(WRITERS)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert not any(t.is_alive() for t in threads)
    assert errors == []
    held = [scorecards.get_scorecard(ctx, card).tags for card in cards]
    assert sorted(held, key=len) == [[], ["baseline", "prod"]]
