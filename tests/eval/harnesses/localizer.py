"""A deterministic localization agent for ContextBench runs (never sees gold).

It reads the files of the checkout whose name stem occurs as a word of the task (else the
``main.*`` files), records each
read as a ``read_file`` tool call (lines 1-40), answers ``{files, spans}`` and, as an edit,
deletes line 2 of the first file it picked (so the run has a repository diff for EditLoc and the
SWE-bench predictions).
"""

from __future__ import annotations

import re
import subprocess

import orjson

from benchbook.contracts.run import CaseInput, HarnessOutput
from benchbook.runtime.harnesses.python import current_workspace

MAX_FILES = 3


def localize(case: CaseInput) -> HarnessOutput:
    """Pick files by name from the task, read them, edit the first one."""
    workdir = current_workspace().workdir
    listed = subprocess.run(
        ["git", "ls-files"], cwd=workdir, capture_output=True, text=True, check=True
    ).stdout.split()
    words = set(re.findall(r"[A-Za-z_]{4,}", case.task.lower()))
    picked = [p for p in listed if p.rsplit("/", 1)[-1].split(".")[0].lower() in words]
    picked = sorted(picked, key=lambda p: (p.count("/"), p))[:MAX_FILES]
    if not picked:  # nothing named in the task: start from the program's entry point
        picked = [p for p in listed if p.rsplit("/", 1)[-1].split(".")[0] == "main"][:1]
    calls = [
        {"name": "read_file", "arguments": {"path": p, "start_line": 1, "end_line": 40}}
        for p in picked
    ]
    if picked:
        target = workdir / picked[0]
        lines = target.read_text(errors="replace").splitlines(keepends=True)
        target.write_text("".join(lines[:1] + lines[2:]))
    answer = {"files": picked, "spans": {p: [{"start": 1, "end": 40}] for p in picked}}
    return HarnessOutput(answer=orjson.dumps(answer).decode(), tool_calls=calls)
