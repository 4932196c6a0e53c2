"""Acceptance (issue 10, SPEC H.2): gold never reaches the runtime, on SQLite and PostgreSQL.

A marker is planted in every gold field of a case — ``expected``, each milestone, a metadata
key declared in ``gold_fields`` and the case's own grader config — and searched for in
everything each kind of harness received: a ``command`` harness dumps its argv, stdin,
environment and every file it can find; the OpenAI server keeps every request body; a
``python`` harness returns its whole input; an ``agent`` harness's scripted model probes its
sandbox with bash, python and the file tools, and every request body — tool results included —
is searched. The task and a non-gold metadata key must be found
in the same places, which proves the search looks where the gold would be.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from benchbook.contracts import Dataset
from benchbook.services import datasets as ds
from benchbook.services import harnesses, run_execution, run_results, runs
from benchbook.services.context import Context, local_admin_context
from tests.eval.test_runs import python_harness, rctx  # noqa: F401 (fixture)
from tests.openaiserver import OpenAIServer, parallel, script, tool_call
from tests.openaiserver.allow import allow_endpoint

MARKER = "GOLD-7f3a"
TASK = "Name the capital of Freedonia in one word."
VISIBLE = "visible-topic-5c1e"

DUMP_SCRIPT = """
import json, os, sys
from pathlib import Path

def files(root):
    out = {}
    for path in sorted(Path(root).rglob("*")):
        if path.is_file():
            out[str(path)] = path.read_bytes().decode("utf-8", "replace")
        else:
            out[str(path)] = "<dir>"
    return out

case_file = os.environ["BENCHBOOK_CASE_FILE"]
record = {
    "argv": sys.argv,
    "stdin": sys.stdin.read(),
    "environ": dict(os.environ),
    "cwd": os.getcwd(),
    "cwd_files": files(os.getcwd()),
    "workdir_files": files(os.environ["BENCHBOOK_WORKDIR"]),
    "home_files": files(os.environ["HOME"]),
    "private_files": files(Path(case_file).parent),
    "case_file": Path(case_file).read_text(),
}
dump = Path(os.environ["DUMP"]) / (os.environ["CASE"] + ".json")
dump.write_text(json.dumps(record))
print("Fredonia")
"""


def planted(dataset_id: str = "gold-probe") -> Dataset:
    """One prompt case with the marker in every gold field, and a second, unmarked case."""
    marked = {
        "id": "marked",
        "env": {"kind": "prompt"},
        "task": TASK,
        "expected": f"{MARKER}-expected",
        "milestones": [
            {"id": "m1", "description": f"{MARKER}-milestone-one"},
            {"id": "m2", "description": f"finds the city ({MARKER}-milestone-two)"},
        ],
        "graders": [{"id": "regex", "config": {"pattern": f"{MARKER}-grader"}}],
        "metadata": {
            "solution": f"{MARKER}-metadata",
            "topic": VISIBLE,
            # the gold of the code-localization benchmarks (SPEC I, issue 12)
            "patch": f"--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-{MARKER}-patch\n+fixed\n",
            "test_patch": f"{MARKER}-test-patch",
            "gold_context": [{"file": "x.py", "start_line": 1, "end_line": 1, "content": MARKER}],
            "FAIL_TO_PASS": f'["{MARKER}-fail-to-pass"]',
            # SWE-bench's hints and a third-party copy's file list are gold too (datasets.swebench)
            "hints_text": f"{MARKER}-hints",
            "patch_files": [f"{MARKER}/fix.py"],
        },
        "gold_fields": [
            "solution",
            "patch",
            "test_patch",
            "gold_context",
            "FAIL_TO_PASS",
            "hints_text",
            "patch_files",
        ],
    }
    plain = {
        "id": "plain",
        "env": {"kind": "prompt"},
        "task": "Say hello.",
        "expected": "hello",
        "graders": [{"id": "answer-match"}],
    }
    return Dataset.model_validate({"id": dataset_id, "version": "1.0.0", "cases": [marked, plain]})


def run_all(ctx: Context, harness: str) -> Any:
    from benchbook.contracts.run import RunSettings, StartRunRequest

    request = StartRunRequest(
        dataset="gold-probe", harness=harness, settings=RunSettings(concurrency=2)
    )
    run = run_execution.execute_run(ctx, runs.start_run(ctx, request).id)
    assert (run.status, run.counts.done, run.counts.error) == ("finished", 2, 0)
    return run


def test_a_command_harness_receives_no_gold_in_argv_stdin_environment_or_files(
    rctx: Context,  # noqa: F811
    tmp_path: Path,
) -> None:
    # The dump is written outside the workdir, which only an unsandboxed single-user install
    # allows; what the harness receives is the same (the sandbox: tests/runtime/test_sandbox.py).
    rctx = local_admin_context(rctx.engine, rctx.settings.model_copy(update={"sandbox": False}))
    ds.register_dataset(rctx, planted())
    script = tmp_path / "dump_everything.py"
    script.write_text(DUMP_SCRIPT)
    dump = tmp_path / "dump"
    dump.mkdir()
    body = {
        "id": "dumper",
        "version": "1.0.0",
        "kind": "command",
        "config": {
            "argv": [sys.executable, str(script), "{task}", "{case_id}", "{sample}", "{workdir}"],
            "env": {"DUMP": str(dump), "CASE": "{case_id}"},
        },
    }
    harnesses.register_harness(rctx, harnesses.parse_harness(body))
    run = run_all(rctx, "dumper@1.0.0")

    record = json.loads((dump / "marked.json").read_text())
    text = json.dumps(record, ensure_ascii=False)
    assert MARKER not in text
    assert record["stdin"] == TASK and TASK in record["argv"]
    assert record["environ"]["BENCHBOOK_TASK"] == TASK and record["environ"]["CASE"] == "marked"
    case_file = json.loads(record["case_file"])
    assert case_file["task"] == TASK and case_file["metadata"] == {"topic": VISIBLE}
    assert any(TASK in content for content in record["private_files"].values())
    assert len(list(dump.iterdir())) == 2  # the unmarked case was dumped too
    result = run_results.list_run_results(rctx, run.id)[0]
    assert (result.case_id, result.answer, result.passed) == ("marked", "Fredonia", False)


def test_no_request_the_openai_server_sees_holds_gold(
    rctx: Context,  # noqa: F811
    openai_server: OpenAIServer,
) -> None:
    ds.register_dataset(rctx, planted())
    openai_server.reply = lambda body: "Fredonia"
    body = {
        "id": "chat",
        "version": "1.0.0",
        "kind": "openai",
        "config": {"base_url": openai_server.url, "model": "gpt-4o-mini", "system": "Be brief."},
    }
    harnesses.register_harness(rctx, harnesses.parse_harness(body))
    allow_endpoint(rctx, openai_server.url)
    run_all(rctx, "chat@1.0.0")

    sent = [json.dumps(body) for body in openai_server.requests]
    assert len(sent) == 2
    assert not [s for s in sent if MARKER in s]
    assert MARKER not in json.dumps(openai_server.request_headers)
    assert any(TASK in s for s in sent)


def test_a_python_harness_gets_no_gold_but_the_non_gold_metadata(
    rctx: Context,  # noqa: F811
) -> None:
    ds.register_dataset(rctx, planted())
    run = run_all(rctx, python_harness(rctx, "leak_probe"))

    answer = run_results.list_run_results(rctx, run.id)[0].answer
    assert MARKER not in answer
    seen = json.loads(answer)
    assert (seen["case_id"], seen["task"], seen["metadata"]) == ("marked", TASK, {"topic": VISIBLE})
    assert MARKER not in run_results.get_run_trace(rctx, run.id, "marked").model_dump_json()


def test_no_request_or_tool_call_of_an_agent_harness_holds_gold(
    rctx: Context,  # noqa: F811
    openai_server: OpenAIServer,
) -> None:
    ds.register_dataset(rctx, planted())
    probe = (
        "env; pwd; ls -laR \"$HOME\" /tmp; cat /proc/self/cmdline | tr '\\0' ' ';"
        " find / -xdev -newer /etc/hostname -type f 2>/dev/null | grep -v '^/proc' | head -200"
        " | xargs -r grep -l . 2>/dev/null | head -50 | xargs -r cat 2>/dev/null"
    )
    openai_server.reply = script(
        [
            parallel(
                tool_call("bash", command=probe),
                tool_call("python", code="import os, sys; print(dict(os.environ), sys.argv)"),
                tool_call("list_dir", path="."),
            ),
            tool_call("submit", answer="Fredonia"),
        ]
    )
    body = {
        "id": "probe-agent",
        "version": "1.0.0",
        "kind": "agent",
        "config": {"base_url": openai_server.url, "model": "gpt-4o-mini", "max_steps": 4},
    }
    harnesses.register_harness(rctx, harnesses.parse_harness(body))
    allow_endpoint(rctx, openai_server.url)
    run = run_all(rctx, "probe-agent@1.0.0")

    sent = [json.dumps(body, ensure_ascii=False) for body in openai_server.requests]
    assert len(sent) == 4  # two cases, two steps each
    assert not [s for s in sent if MARKER in s]
    assert MARKER not in json.dumps(openai_server.request_headers)
    assert any(TASK in s for s in sent)
    trace = run_results.get_run_trace(rctx, run.id, "marked")
    bash, python, listed, _ = trace.tool_calls
    assert listed["ok"] is True
    assert "HOME=" in str(bash["result"]) and "exit code 0" in str(python["result"])
    assert MARKER not in trace.model_dump_json()
