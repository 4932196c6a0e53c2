"""Acceptance (issue 10, SPEC H.4, D): a run over HTTP end to end, on SQLite and PostgreSQL.

``POST /api/runs`` only queues the run; a :class:`RunWorker` thread (what ``benchbook serve``
starts) executes it; the run, its scorecard and its results are then read over HTTP. Bad
requests are 400/404 errors that store nothing.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from benchbook.app import create_app
from benchbook.services.context import Context
from benchbook.services.run_worker import RunWorker
from tests.eval.test_runs import arithmetic, python_harness, rctx  # noqa: F401 (fixture)

N = 6


@pytest.fixture
def client(rctx: Context) -> Iterator[TestClient]:  # noqa: F811
    with TestClient(create_app(rctx.settings, rctx.engine)) as http:
        yield http


def wait_until_ended(client: TestClient, run_id: str, timeout_s: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        run = client.get(f"/api/runs/{run_id}").json()
        if run["status"] not in ("queued", "running"):
            return run
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} did not end in {timeout_s} s: {run}")


def test_a_run_posted_over_http_is_queued_then_executed_by_the_worker_and_read_back(
    rctx: Context,  # noqa: F811
    client: TestClient,
) -> None:
    body = arithmetic(n=N).model_dump(mode="json")
    assert client.post("/api/datasets", json=body).status_code == 201
    harness = python_harness(rctx, "add")
    request = {"dataset": "sums", "harness": harness, "settings": {"concurrency": 2}}

    posted = client.post("/api/runs", json=request)
    assert posted.status_code == 202, posted.text
    run = posted.json()
    assert (run["status"], run["counts"]["done"], run["counts"]["total"]) == ("queued", 0, N)
    time.sleep(0.2)
    still = client.get(f"/api/runs/{run['id']}").json()
    assert (still["status"], still["counts"]["done"]) == ("queued", 0)  # no worker, no work

    worker = RunWorker(rctx.engine, rctx.settings, poll_s=0.05)
    worker.start()
    try:
        ended = wait_until_ended(client, run["id"])
    finally:
        worker.stop()
        worker.join(timeout=10)
    assert not worker.is_alive()
    assert ended["status"] == "finished"
    assert (ended["counts"]["done"], ended["counts"]["passed"], ended["pass_rate"]) == (N, N, 1.0)

    card = client.get(f"/api/scorecards/{ended['scorecard_id']}")
    assert card.status_code == 200
    assert (card.json()["n"], card.json()["passed"], card.json()["pass_rate"]) == (N, N, 1.0)
    assert card.json()["pass_interval"]["method"] == "wilson"

    first = client.get(f"/api/runs/{run['id']}/results", params={"limit": 4}).json()
    rest = client.get(f"/api/runs/{run['id']}/results", params={"after": "3:0"}).json()
    assert [r["case_id"] for r in first] == ["c0", "c1", "c2", "c3"]
    assert [r["case_id"] for r in rest] == ["c4", "c5"]
    assert [r["answer"] for r in first + rest] == [str(i + 1) for i in range(N)]
    assert all(r["scores"][0]["metric"] == "numeric" for r in first + rest)


@pytest.mark.parametrize(
    ("change", "status", "needle"),
    [
        ({"graders": [{"id": "no-such-grader"}]}, 400, "numeric"),
        ({"harness": "no-such-harness@1.0.0"}, 404, "no-such-harness"),
        ({"settings": {"concurrency": 0}}, 400, "concurrency"),
    ],
)
def test_bad_run_requests_over_http_are_clear_errors_and_store_nothing(
    rctx: Context,  # noqa: F811
    client: TestClient,
    change: dict[str, Any],
    status: int,
    needle: str,
) -> None:
    assert client.post("/api/datasets", json=arithmetic(n=2).model_dump(mode="json")).is_success
    request = {"dataset": "sums", "harness": python_harness(rctx, "add"), **change}
    answer = client.post("/api/runs", json=request)
    assert answer.status_code == status, answer.text
    assert needle in answer.text
    if status == 400 and "graders" in change:
        assert "no-such-grader" in answer.json()["message"]
        assert "answer-match" in answer.json()["message"]  # the known ids are listed
    assert client.get("/api/runs").json() == []
