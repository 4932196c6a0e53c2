"""The ``localization`` grader on a real checkout: gold from the case, prediction from the
answer, trajectory from the trace's read tool calls, EditLoc from the repository diff."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest

from benchbook.contracts.dataset import Case, GraderSpec
from benchbook.contracts.run import EnvSnapshot, Trace
from benchbook.eval.graders.localization import parse_prediction, steps_from_tool_calls
from benchbook.eval.grading import Grading, Submission, grade_submission
from tests.repo_bundles import BundledRepo

SPEC = GraderSpec(id="localization")
GOLD = [
    {"file": "xarray/core/weighted.py", "start_line": 137, "end_line": 150, "content": ""},
    {"file": "xarray/tests/test_weighted.py", "start_line": 36, "end_line": 44, "content": ""},
]


def case(sha: str, **metadata: Any) -> Case:
    meta = {"gold_context": orjson.dumps(GOLD).decode(), **metadata}
    return Case(
        id="xarray-4075",
        env={
            "kind": "repo",
            "source": {"git": "https://github.com/pydata/xarray.git", "ref": sha},
        },
        task="weighted sum of weights with booleans",
        metadata=meta,
        gold_fields=list(meta),
    )


def grade(submission: Submission, c: Case) -> Any:
    (score,) = asyncio.run(grade_submission([SPEC], submission, c, Grading()))
    return score


def test_the_grader_scores_answer_trace_and_diff_against_the_checkout(
    bundled_repo: BundledRepo,
) -> None:
    repo, sha = bundled_repo("pydata__xarray")
    answer = {
        "files": ["xarray/core/weighted.py"],
        "spans": {"xarray/core/weighted.py": [{"start": 137, "end": 150}]},
    }
    tool_calls: list[dict[str, Any]] = [
        {"name": "bash", "arguments": {"command": "cat xarray/core/weighted.py"}},
        {
            "name": "read_file",
            "arguments": {"path": "xarray/core/weighted.py", "start_line": 140, "end_line": 150},
        },
        {
            "name": "bash",
            "arguments": '{"command": "sed -n \'36,44p\' xarray/tests/test_weighted.py"}',
        },
    ]
    diff = (
        "--- a/xarray/core/weighted.py\n+++ b/xarray/core/weighted.py\n"
        "@@ -145 +145 @@\n-        old\n+        new\n"
    )
    trace = Trace(
        answer=orjson.dumps(answer).decode(),
        tool_calls=tool_calls,
        env_snapshot=EnvSnapshot(diff=diff),
    )
    score = grade(Submission(answer=trace.answer, trace=trace, workdir=repo), case(sha))
    assert score.status == "ok", score.detail
    final = score.detail["final"]
    assert final["file"]["coverage"] == 0.5 and final["file"]["precision"] == 1.0
    assert final["line"]["intersection"] == 14 and final["line"]["gold_size"] == 23
    assert score.value == 14 / 23
    trajectory = score.detail["trajectory"]
    assert [s["coverage"]["file"] for s in trajectory["steps"]] == [0.5, 0.5, 1.0]
    assert trajectory["steps"][-1]["coverage"]["line"] == (11 + 9) / 23
    assert score.detail["editloc"]["recall"] == 1.0


def test_without_the_workspace_the_grader_is_skipped_and_without_gold_it_errs(
    bundled_repo: BundledRepo,
) -> None:
    repo, sha = bundled_repo("pydata__xarray")
    trace = Trace(answer="xarray/core/weighted.py")
    assert grade(Submission(answer=trace.answer, trace=trace), case(sha)).status == "skipped"
    bare = Case(
        id="x",
        env={"kind": "repo", "source": {"git": "https://github.com/a/b.git", "ref": sha}},
        task="t",
    )
    score = grade(Submission(answer="a.py", trace=trace, workdir=repo), bare)
    assert score.status == "error" and "no gold_context and no patch" in str(score.detail)


def test_gold_falls_back_to_the_patch_with_the_insertions_enclosing_definition(
    bundled_repo: BundledRepo,
) -> None:
    repo, sha = bundled_repo("pydata__xarray")
    patch = (
        "--- a/xarray/core/weighted.py\n+++ b/xarray/core/weighted.py\n"
        "@@ -145 +145,2 @@\n-        x\n+        y\n+        z\n"
        "--- /dev/null\n+++ b/xarray/core/new.py\n@@ -0,0 +1 @@\n+a = 1\n"
    )
    c = Case(
        id="p",
        env={"kind": "repo", "source": {"git": "https://github.com/pydata/xarray.git", "ref": sha}},
        task="t",
        metadata={"patch": patch},
        gold_fields=["patch"],
    )
    trace = Trace(answer="xarray/core/weighted.py\n")
    score = grade(Submission(answer=trace.answer, trace=trace, workdir=repo), c)
    assert score.detail["final"]["file"]["gold_size"] == 2  # the new file is a file-level location
    # line 145 (removed, and where the two lines go in) and the whole enclosing method at base
    assert score.detail["final"]["line"]["gold_size"] == 14
    assert score.detail["final"]["file"]["coverage"] == 0.5


@pytest.mark.parametrize(
    ("call", "step"),
    [
        ({"name": "read", "input": {"file_path": "a.py"}}, {"files": ["a.py"]}),
        (
            {"name": "view", "arguments": {"path": "a.py", "start_line": 3}},
            {"files": ["a.py"], "spans": {"a.py": [{"start": 3, "end": 3}]}},
        ),
        (
            {"name": "bash", "arguments": {"command": "sed -n 5p b.go"}},
            {"files": ["b.go"], "spans": {"b.go": [{"start": 5, "end": 5}]}},
        ),
        ({"name": "bash", "arguments": {"command": "ls -la"}}, None),
        ({"name": "write_file", "arguments": {"path": "a.py"}}, None),
    ],
)
def test_read_tool_calls_become_trajectory_steps(
    call: dict[str, Any], step: dict[str, Any] | None
) -> None:
    assert steps_from_tool_calls([call]) == ([step] if step else [])


def test_answers_parse_as_json_with_upstream_names_or_as_path_lines() -> None:
    upstream = parse_prediction('{"pred_files": ["a.py"], "pred_symbols": {"a.py": ["f"]}}')
    assert (upstream.files, upstream.symbols) == (["a.py"], {"a.py": ["f"]})
    spans_only = parse_prediction('{"spans": {"b.py": [{"start": 1, "end": 2}]}}')
    assert spans_only.files == ["b.py"]
    assert parse_prediction("a.py\n\n b.py \n").files == ["a.py", "b.py"]


def test_an_answer_outside_the_checkout_is_upstreams_no_context_row_left_out_of_aggregates(
    bundled_repo: BundledRepo,
) -> None:
    from benchbook.contracts.run import CaseResult
    from benchbook.contracts.score import Score
    from benchbook.eval.scorecards import ScorecardBuilder
    from benchbook.services.localization import _compare

    repo, sha = bundled_repo("pydata__xarray")
    trace = Trace(answer="no/such/file.py\n")
    score = grade(Submission(answer=trace.answer, trace=trace, workdir=repo), case(sha))
    assert score.status == "skipped" and score.passed is None
    assert score.detail["error"] == "no_context_extracted"
    assert score.detail["unresolved_paths"] == ["no/such/file.py"]
    assert "no/such/file.py" in score.detail["reason"]
    agreed = _compare("x", score, {"instance_id": "x", "error": "no_context_extracted"})
    assert agreed.agree is True
    ok_trace = Trace(answer="xarray/core/weighted.py\n")
    scored = grade(Submission(answer=ok_trace.answer, trace=ok_trace, workdir=repo), case(sha))
    builder = ScorecardBuilder()
    for n, s in enumerate([score, scored]):
        builder.add(CaseResult(case_id=f"c{n}", sample=0, status="ok", scores=[s]))
    summary = builder.summary()["localization"]
    assert (summary["instances"], summary["errored"]) == (2, 1)
    assert summary["micro"]["file"] == pytest.approx(
        {"coverage": 0.5, "precision": 1.0, "f1": 2 / 3}
    )  # the scored instance alone
    assert isinstance(score, Score)


def test_a_reversed_span_in_the_answer_is_a_grader_error_naming_case_file_and_span(
    bundled_repo: BundledRepo,
) -> None:
    repo, sha = bundled_repo("pydata__xarray")
    answer = orjson.dumps({"spans": {"xarray/core/weighted.py": [{"start": 210, "end": 112}]}})
    trace = Trace(answer=answer.decode())
    score = grade(Submission(answer=trace.answer, trace=trace, workdir=repo), case(sha))
    assert score.status == "error" and score.passed is None
    message = str(score.detail["error"])
    assert "case xarray-4075" in message
    assert "span (210, 112) in xarray/core/weighted.py ends before it starts" in message
