"""A toy code-localization agent (a ``command`` harness) for ContextBench runs.

Runs in the case's checkout. Picks the files whose name stem is a word of the task (else the
``main.*`` files), "reads" lines 1-40 of each — recorded as ``read_file`` tool calls in
$BENCHBOOK_TRACE_FILE, which become the trajectory — answers ``{files, spans}`` on stdout and,
as its "fix", deletes line 2 of the first file (so the run has a repository diff). Never sees
gold: only the task on stdin.
"""

import json
import os
import re
import subprocess
import sys

task = sys.stdin.read().lower()
listed = subprocess.run(["git", "ls-files"], capture_output=True, text=True).stdout.split()
words = set(re.findall(r"[a-z_]{4,}", task))


def stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].split(".")[0].lower()


picked = sorted((p for p in listed if stem(p) in words), key=lambda p: (p.count("/"), p))[:3]
picked = picked or [p for p in listed if stem(p) == "main"][:1]
with open(os.environ["BENCHBOOK_TRACE_FILE"], "a", encoding="utf-8") as trace:
    for path in picked:
        call = {
            "type": "tool_call",
            "name": "read_file",
            "arguments": {"path": path, "start_line": 1, "end_line": 40},
        }
        trace.write(json.dumps(call) + "\n")
if picked:
    with open(picked[0], encoding="utf-8", errors="replace") as f:
        lines = f.readlines()
    with open(picked[0], "w", encoding="utf-8") as f:
        f.writelines(lines[:1] + lines[2:])
print(json.dumps({"files": picked, "spans": {p: [{"start": 1, "end": 40}] for p in picked}}))
