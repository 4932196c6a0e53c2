"""``client.runs.report`` (issue 16 item 3): an external harness's answers graded by the server
like any run, against a real ``benchbook serve`` on both backends; and ``start_run``/``wait``/
``scorecard``/``compare`` for a registered harness answering the same."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import httpx
import pytest

from benchbook.client import Client, Conflict, InvalidInput, NotFound
from benchbook.contracts.scorecard import Scorecard
from tests.client.conftest import Live

# case "d": the harness fails (exit 3 / a reported error); "f": an answer numeric cannot read
ANSWERS: dict[str, str | None] = {"a": "2", "b": "5", "c": "6", "d": None, "e": "11", "f": "x"}
INLINE = ";".join(
    f"{k}:{v}" for k, v in ANSWERS.items() if v is not None
)  # no braces: not a template
# the answers ride in argv: a workspace admin's harness may not name a file for the sandbox to
# bind (only an installation admin's may, docs/security.md)
SCRIPT = "import sys; a=dict(p.split(':',1) for p in sys.argv[1].split(';')).get(sys.argv[2]); " + (
    "sys.exit(3) if a is None else print(a)"
)


def reported_rows() -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for case_id, answer in ANSWERS.items():
        if answer is None:
            rows.append({"case_id": case_id, "error": "exit code 3"})
        else:
            rows.append({"case_id": case_id, "answer": answer})
    return rows


def summary(card: Scorecard) -> dict[str, object]:
    keep = ("cases", "n", "passed", "errors", "not_run", "pass_rate", "pass_interval", "metrics")
    return card.model_dump(include=set(keep))


def test_a_reported_run_scores_like_running_the_same_answers(
    bb: Client, live: Live, tmp_path: Path
) -> None:
    reported = bb.runs.report("arith@1.1.0", harness="my-agent@1.2.0", results=reported_rows())
    assert reported.status == "finished" and reported.harness == "my-agent@1.2.0"
    assert reported.counts.total == 6 and reported.counts.done == 6
    by_case = {r.case_id: r for r in bb.runs.results(reported.id)}
    assert {k for k, r in by_case.items() if r.passed} == {"a", "c", "e"}
    assert by_case["d"].status == "error" and by_case["b"].scores[0].passed is False

    harness = {
        "id": "replay",
        "version": "1.0.0",
        "kind": "command",
        "config": {"argv": [sys.executable, "-c", SCRIPT, INLINE, "{case_id}"]},
    }
    registered = httpx.post(
        f"{live.url}/api/harnesses",
        json=harness,
        headers={"authorization": f"Bearer {live.admin_key}"},
    )
    assert registered.status_code in (200, 201), registered.text
    run = bb.runs.start_run("arith@1.1.0", "replay@1.0.0", settings={"concurrency": 2})
    done = bb.runs.wait(run.id, poll_s=0.2, timeout_s=120)
    assert done.status == "finished", done
    direct, mine = bb.runs.scorecard(done), bb.runs.scorecard(reported.id)
    assert summary(mine) == summary(direct)
    assert mine.pass_rate == 0.5 and mine.metrics["numeric"].n == direct.metrics["numeric"].n

    comparison = bb.runs.compare(mine.id, direct.id)
    assert comparison.comparable, comparison.reasons
    assert comparison.counts.fixed == comparison.counts.regressed == 0
    assert comparison.counts.still_passing == 3 and comparison.pass_rate_delta == 0.0


def test_report_rows_are_checked_and_named(bb: Client) -> None:
    with pytest.raises(NotFound) as unknown:
        bb.runs.report("arith@1.0.0", "my-agent@1.2.0", [{"case_id": "a"}, {"case_id": "zz"}])
    assert "results.1.case_id" in unknown.value.message and "'zz'" in unknown.value.message
    assert unknown.value.details["errors"][0]["path"] == "results.1.case_id"
    rows = [{"case_id": "a", "answer": "2"}, {"case_id": "b"}, {"case_id": "a", "answer": "3"}]
    with pytest.raises(InvalidInput) as repeated:
        bb.runs.report("arith@1.0.0", "my-agent@1.2.0", rows)
    assert "results.2" in repeated.value.message and "repeats results.0" in repeated.value.message
    with pytest.raises(InvalidInput, match="id@version"):
        bb.runs.report("arith@1.0.0", "my-agent", [{"case_id": "a"}])
    with pytest.raises(NotFound):
        bb.runs.report("nope@1.0.0", "my-agent@1.2.0", [{"case_id": "a"}])
    with pytest.raises(InvalidInput, match="unknown grader"):
        bb.runs.report("arith@1.0.0", "my-agent@1.2.0", [{"case_id": "a"}], [{"id": "nope"}])


def test_an_external_harness_cannot_be_started_and_viewers_cannot_report(
    bb: Client, live: Live
) -> None:
    bb.runs.report("arith@1.0.0", "ext-only@0.1.0", [{"case_id": "a", "answer": "2"}])
    with pytest.raises(Conflict, match="external"):
        bb.runs.start_run("arith@1.0.0", "ext-only@0.1.0")
    key, _ = live.mint_key("reader", "read")
    from benchbook.client import Forbidden

    with pytest.raises(Forbidden):
        live.client(key).runs.report("arith@1.0.0", "my-agent@1.2.0", [{"case_id": "a"}])


def test_the_client_reads_a_leaderboard_and_exports_a_run(bb: Client, tmp_path: Path) -> None:
    """``client.runs.leaderboard`` and ``client.runs.export`` (issue 30) against the server."""
    cheap = bb.runs.report("arith@1.1.0", harness="lb-cheap@1.0.0", results=reported_rows())
    board = bb.runs.leaderboard("arith@1.1.0", select="all")
    rows = [r for g in board.groups for r in g.rows]
    assert board.dataset == "arith@1.1.0" and cheap.id in {r.run_id for r in rows}
    with pytest.raises(InvalidInput):
        bb.runs.leaderboard("arith@1.1.0", select="worst")
    with pytest.raises(NotFound):
        bb.runs.leaderboard("no-such-dataset")
    out = tmp_path / "run.jsonl"
    assert bb.runs.export(cheap.id, out) == 6
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["case_id"] for r in lines] == list(ANSWERS)
    assert [r["case_id"] for r in lines] == [r.case_id for r in bb.runs.results(cheap.id)]
    assert bb.runs.export(cheap.id, tmp_path / "run.csv", format="csv") == 7  # header + 6
    with pytest.raises(NotFound):
        bb.runs.export("run_0000000000000000", tmp_path / "none.jsonl")
    history = list(bb.runs.case_history("arith", "a"))
    assert cheap.id in {h.run_id for h in history} and history[0].run_id == cheap.id
    assert bb.runs.flaky(cheap.id) == []
