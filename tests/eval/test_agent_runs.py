"""Acceptance (issue 33): the ``agent`` harness run end to end through the services, driven by
the scripted OpenAI-compatible server — a GSM8K case, a repo case from a bundled mirror graded
by ``tests-pass`` and ``localization``, and a browser case — on SQLite and PostgreSQL."""

from __future__ import annotations

import functools
import json
import os
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from benchbook.contracts import Dataset
from benchbook.contracts.imports import ImportRequest
from benchbook.contracts.run import RunSettings, StartRunRequest
from benchbook.services import datasets as ds
from benchbook.services import harnesses, imports, run_execution, run_results, runs, scorecards
from benchbook.services.context import Context, local_admin_context
from tests.openaiserver import OpenAIServer, parallel, script, tool_call
from tests.openaiserver.allow import allow_endpoint
from tests.repo_bundles import mirror_from_bundle


@pytest.fixture
def actx(ctx: Context, tmp_path: Path) -> Context:
    """The local admin with its own home (mirrors), work root and a pricing table that knows
    ``test-model`` ($1 per M input tokens, $2 per M output tokens)."""
    table = {
        "as_of": "2026-12-01",
        "source": "test",
        "models": {"test-model": {"input_per_mtok_usd": 1.0, "output_per_mtok_usd": 2.0}},
    }
    (tmp_path / "pricing.json").write_text(json.dumps(table))
    settings = ctx.settings.model_copy(
        update={
            "home": tmp_path / "home",
            "work_root": tmp_path / "work",
            "pricing_file": tmp_path / "pricing.json",
        }
    )
    return local_admin_context(ctx.engine, settings)


def register_agent(ctx: Context, server: OpenAIServer, **config: Any) -> str:
    body = {
        "id": "ref-agent",
        "version": "1.0.0",
        "kind": "agent",
        "config": {"base_url": server.url, "model": "test-model", "max_steps": 8, **config},
    }
    harnesses.register_harness(ctx, harnesses.parse_harness(body))
    allow_endpoint(ctx, server.url)
    return "ref-agent@1.0.0"


def run(ctx: Context, dataset: str, harness: str, **settings: Any) -> Any:
    request = StartRunRequest(
        dataset=dataset, harness=harness, settings=RunSettings.model_validate(settings)
    )
    done = run_execution.execute_run(ctx, runs.start_run(ctx, request).id)
    assert done.status == "finished", done
    return done


def test_a_gsm8k_case_is_answered_by_submit_and_graded_numeric(
    actx: Context, openai_server: OpenAIServer, shared_data: Path
) -> None:
    test = shared_data / "gsm8k" / "test.jsonl"
    imports.import_benchmark(actx, ImportRequest(benchmark="gsm8k", id="gsm8k", limit=3), test)
    openai_server.reply = script(
        [
            tool_call("python", code="print((16 - 3 - 4) * 2)"),
            lambda body: tool_call("submit", answer=body["messages"][-1]["content"].split()[-1]),
        ]
    )
    done = run(actx, "gsm8k", register_agent(actx, openai_server), limit=3, concurrency=3)
    assert (done.counts.done, done.counts.error) == (3, 0)
    results = {r.case_id: r for r in run_results.list_run_results(actx, done.id)}
    assert len(results) == 3 and all(r.answer == "18" for r in results.values())
    trace = run_results.get_run_trace(actx, done.id, sorted(results)[0])
    assert trace.limit is None and [t["name"] for t in trace.tool_calls] == ["python", "submit"]
    assert trace.tool_calls[0]["result"] == "exit code 0\n18\n"
    model_calls = [e for e in trace.events if e["type"] == "model_call"]
    assert [e["step"] for e in model_calls] == [1, 2]
    assert sum(int(e["input_tokens"]) for e in model_calls) == trace.usage.input_tokens  # type: ignore[arg-type]
    assert trace.cost_usd is not None and trace.cost_usd > 0  # test-model is priced
    step_costs = [float(e["cost_usd"]) for e in model_calls]  # type: ignore[arg-type]
    assert sum(step_costs) == pytest.approx(trace.cost_usd)
    # only the first case's reference answer is 18 (Janet's ducks)
    assert {k: r.passed for k, r in results.items()} == {
        "gsm8k-0": True,
        "gsm8k-1": False,
        "gsm8k-2": False,
    }


UTILS = "xarray/core/utils.py"
OLD = "    return isinstance(value, slice) and value == slice(None)"
NEW = (
    "    return isinstance(value, slice) and (value.start, value.stop) == (None, None)"
    " and value.step in (None, 1)"
)
TEST_CMD = (
    "python3 -c \"import ast; m = ast.parse(open('xarray/core/utils.py').read()); "
    "f = [n for n in m.body if getattr(n, 'name', '') == 'is_full_slice']; "
    "ns = {'Any': object}; exec(compile(ast.Module(f, []), 'utils', 'exec'), ns); "
    "assert ns['is_full_slice'](slice(None, None, 1)); "
    "assert not ns['is_full_slice'](slice(1, None)); "
    "print('2 passed')\""
)


def repo_dataset(sha: str) -> Dataset:
    patch = f"--- a/{UTILS}\n+++ b/{UTILS}\n@@ -243 +243 @@\n-{OLD}\n+{NEW}\n"
    source = {"git": "https://github.com/pydata/xarray.git", "ref": sha}
    return Dataset.model_validate(
        {
            "id": "xr-fix",
            "version": "1.0.0",
            "cases": [
                {
                    "id": "full-slice",
                    "env": {"kind": "repo", "source": source},
                    "task": "is_full_slice(slice(None, None, 1)) returns False; it should be True.",
                    "metadata": {"patch": patch, "test_cmd": TEST_CMD},
                    "gold_fields": ["patch"],
                    "graders": [{"id": "tests-pass"}, {"id": "localization"}],
                }
            ],
        }
    )


def test_a_repo_case_from_a_mirror_is_fixed_by_scripted_edits_and_graded(
    actx: Context, openai_server: OpenAIServer, shared_data: Path
) -> None:
    (bundle,) = (shared_data / "contextbench" / "repos").glob("pydata__xarray@*.bundle")
    _, sha = mirror_from_bundle(bundle, actx.settings.home / "mirrors")
    ds.register_dataset(actx, repo_dataset(sha))
    openai_server.reply = script(
        [
            tool_call("bash", command="grep -rn 'def is_full_slice' xarray/"),
            tool_call("read_file", path=UTILS, start_line=242, end_line=243),
            parallel(
                tool_call("edit_file", path=UTILS, old_str=OLD, new_str=NEW),
                tool_call("bash", command="git diff --stat"),
            ),
            tool_call("submit", answer=UTILS),
        ]
    )
    done = run(actx, "xr-fix", register_agent(actx, openai_server))
    (result,) = run_results.list_run_results(actx, done.id)
    assert (result.status, result.answer, result.passed) == ("ok", UTILS, True)
    scores = {s.grader: s for s in result.scores}
    assert scores["tests-pass"].passed is True and scores["tests-pass"].detail["exit_code"] == 0
    located = scores["localization"].detail
    assert located["final"]["file"]["coverage"] == 1.0  # type: ignore[index]
    assert located["trajectory"]["steps"]  # type: ignore[index]  # the read_file call
    assert located["editloc"]["recall"] == 1.0  # type: ignore[index]
    system = openai_server.requests[0]["messages"][0]["content"]
    assert "fix the issue by editing the files" in system  # the repo template
    trace = run_results.get_run_trace(actx, done.id, "full-slice")
    assert trace.env_snapshot.diff is not None and f"+{NEW}" in trace.env_snapshot.diff
    grep, read, edit, stat = trace.tool_calls[:4]
    assert "xarray/core/utils.py:242:def is_full_slice" in str(grep["result"])
    assert str(read["result"]).endswith(OLD)
    assert edit["result"] == f"edited {UTILS} at line 243"
    assert "1 file changed" in str(stat["result"])


def test_an_unfixed_repo_case_fails_tests_pass(
    actx: Context, openai_server: OpenAIServer, shared_data: Path
) -> None:
    (bundle,) = (shared_data / "contextbench" / "repos").glob("pydata__xarray@*.bundle")
    _, sha = mirror_from_bundle(bundle, actx.settings.home / "mirrors")
    ds.register_dataset(actx, repo_dataset(sha))
    openai_server.reply = script([tool_call("submit", answer=UTILS)])
    done = run(actx, "xr-fix", register_agent(actx, openai_server))
    (result,) = run_results.list_run_results(actx, done.id)
    assert result.status == "ok" and result.passed is False
    assert {s.grader: s.passed for s in result.scores}["tests-pass"] is False


@pytest.fixture
def page(tmp_path: Path) -> Iterator[str]:
    root = tmp_path / "site"
    root.mkdir()
    (root / "index.html").write_text(
        "<html><head><title>Benchbook agent page</title></head><body><p>hello</p></body></html>"
    )
    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *args: None  # type: ignore[attr-defined]
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/index.html"
    httpd.shutdown()


@pytest.mark.skipif(
    not Path("/usr/bin/chromium").exists() and os.environ.get("CI", "").lower() != "true",
    reason="Chromium is not installed (apt-get install chromium); required under CI=true",
)
def test_a_browser_case_reads_the_page_title_through_the_browser_tool(
    actx: Context, openai_server: OpenAIServer, page: str
) -> None:
    allowed = [page.removeprefix("http://").split("/")[0]]  # the browser's egress (issue 27)
    settings = actx.settings.model_copy(update={"browser_allowed_hosts": allowed})
    actx = local_admin_context(actx.engine, settings)
    case = {
        "id": "title",
        "env": {"kind": "browser", "start_url": page},
        "task": "What is the title of the open page?",
        "expected": "Benchbook agent page",
        "graders": [{"id": "answer-match"}],
    }
    dataset = {"id": "web-title", "version": "1.0.0", "cases": [case]}
    ds.register_dataset(actx, Dataset.model_validate(dataset))
    openai_server.reply = script(
        [
            tool_call("browser", action="title"),
            tool_call("browser", action="goto", url="file:///etc/passwd"),
            lambda body: tool_call("submit", answer=body["messages"][-3]["content"]),
        ]
    )
    harness = register_agent(
        actx, openai_server, tools=["browser", "submit"], system="Use the browser."
    )
    done = run(actx, "web-title", harness)
    (result,) = run_results.list_run_results(actx, done.id)
    assert (result.answer, result.passed) == ("Benchbook agent page", True), (
        result.error,
        run_results.get_run_trace(actx, done.id, "title").tool_calls,
    )
    trace = run_results.get_run_trace(actx, done.id, "title")
    assert trace.tool_calls[1]["result"] == "error: only http(s) URLs and about:blank may be opened"
    (first,) = openai_server.requests[:1]
    assert [t["function"]["name"] for t in first["tools"]] == ["browser", "submit"]
    assert json.dumps(first).count("Use the browser.") == 1
    assert trace.env_snapshot.url == page


def test_cases_ended_at_a_limit_are_counted_apart_from_errors_in_the_scorecard(
    actx: Context, openai_server: OpenAIServer
) -> None:
    cases = [
        {
            "id": f"c{i}",
            "env": {"kind": "prompt"},
            "task": f"Loop {i}.",
            "expected": "1",
            "graders": [{"id": "answer-match"}],
        }
        for i in range(3)
    ]
    ds.register_dataset(
        actx, Dataset.model_validate({"id": "loops", "version": "1.0.0", "cases": cases})
    )

    def reply(body: dict[str, Any]) -> Any:
        if "Loop 0." in body["messages"][1]["content"]:
            return tool_call("submit", answer="1")
        if "Loop 1." in body["messages"][1]["content"]:
            return tool_call("bash", command="echo still going")
        return "thinking, no tools"

    openai_server.reply = reply
    done = run(actx, "loops", register_agent(actx, openai_server, max_steps=2))
    assert (done.counts.ok, done.counts.error) == (3, 0)
    card = scorecards.get_scorecard(actx, done.scorecard_id)
    assert (card.errors, card.passed, card.n) == (0, 1, 3)
    assert card.limits == {"steps": 2}
    limits = {
        r.case_id: run_results.get_run_trace(actx, done.id, r.case_id).limit
        for r in run_results.list_run_results(actx, done.id)
    }
    assert limits == {"c0": None, "c1": "steps", "c2": "steps"}
