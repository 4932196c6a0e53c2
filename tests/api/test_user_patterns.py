"""A member's pathological ``regex`` pattern over HTTP (security finding: a rescore froze the
server for 90 s+): the rescore returns promptly, the (case, sample) holds a grader error naming
the time bound, and the server answers other requests meanwhile."""

from __future__ import annotations

import threading

from fastapi.testclient import TestClient

from benchbook.services.context import Context
from tests.api.people import bearer, person, register
from tests.eval.test_linear_rules import hang_guard


def test_a_members_pathological_rescore_returns_promptly_with_a_grader_error(
    client: TestClient, ctx: Context
) -> None:
    register(ctx)
    mia = bearer(person(ctx, "mia"))
    report = {"dataset": "arith", "harness": "ext@1.0.0",
              "results": [{"case_id": "q0", "answer": "a" * 80}]}  # fmt: skip
    reported = client.post("/api/runs/report", json=report, headers=mia)
    assert reported.status_code == 201, reported.text
    run_id = reported.json()["id"]
    graders = [{"id": "regex", "config": {"pattern": "(a|aa)+b"}}]
    health: list[int] = []
    probe = threading.Timer(0.5, lambda: health.append(client.get("/api/health").status_code))
    probe.start()
    with hang_guard(60):  # re would take centuries; the bound is 2 s
        rescored = client.post(f"/api/runs/{run_id}/rescore", json={"graders": graders},
                               headers=mia)  # fmt: skip
    probe.join()
    assert rescored.status_code == 200, rescored.text
    card = rescored.json()
    assert card["grader_errors"] == 1 and card["passed"] == 0, card
    results = client.get(f"/api/scorecards/{card['id']}/results", headers=mia)
    assert results.status_code == 200, results.text
    assert "regex grader: pattern took longer than 2 s on this answer" in results.text
    assert health == [200], "the server answered while the pattern ran"
