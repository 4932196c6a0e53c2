"""The file tools (``read_file``, ``write_file``, ``edit_file``, ``list_dir``), run inside the
case's sandbox.

Each call is one sandboxed ``python -I -c`` process (:data:`FILE_TOOL_SCRIPT`) that reads its
request as JSON on stdin and prints ``{ok, output}``. The script resolves the path against the
workdir with symlinks followed (``os.path.realpath``) and refuses anything that lands outside it
(``..``, an absolute path, a symlink pointing out); the sandbox around it exposes nothing of the
server's data even if it did not. Sizes are bounded by ``file_bytes``: a read shows at most that
many bytes, a write or an edit refuses content or files larger than that.
"""

from __future__ import annotations

import sys
from typing import Any

import orjson

from benchbook.runtime.environments import Workspace
from benchbook.runtime.harnesses.agent.process import ToolRun, run_tool_process
from benchbook.runtime.sandbox import SandboxLimits

FILE_TOOL_SCRIPT = r"""
import json, os, sys

def main(req):
    root = os.path.realpath(req["root"])
    limit = int(req["file_bytes"])
    op = req["op"]
    raw = req.get("path", ".")
    full = os.path.realpath(os.path.join(root, raw))
    if full != root and not full.startswith(root + os.sep):
        return False, f"refused: {raw} is outside the workspace ({root})"
    rel = os.path.relpath(full, root)
    if op == "list_dir":
        if not os.path.isdir(full):
            return False, f"{rel} is not a directory"
        names = sorted(os.listdir(full))
        lines = []
        for name in names[:1000]:
            path = os.path.join(full, name)
            if os.path.isdir(path) and not os.path.islink(path):
                lines.append(name + "/")
            else:
                try:
                    lines.append(f"{name}  ({os.lstat(path).st_size} bytes)")
                except OSError:
                    lines.append(name)
        if len(names) > 1000:
            lines.append(f"[… {len(names) - 1000} more entries not shown]")
        return True, "\n".join(lines) if lines else "(empty directory)"
    if op == "read_file":
        if not os.path.isfile(full):
            return False, f"{rel} is not a file"
        size = os.path.getsize(full)
        with open(full, "rb") as handle:
            data = handle.read(limit)
        if b"\0" in data[:8192]:
            return False, f"{rel} is a binary file ({size} bytes)"
        lines = data.decode("utf-8", "replace").splitlines()
        start = req.get("start_line") or 1
        end = req.get("end_line") or len(lines)
        shown = [f"{n:6}\t{lines[n - 1]}" for n in range(max(1, start), min(end, len(lines)) + 1)]
        text = "\n".join(shown)
        if size > limit:
            text += f"\n[… file is {size} bytes; only the first {limit} were read]"
        return True, text
    if op == "write_file":
        data = req["content"].encode("utf-8")
        if len(data) > limit:
            return False, f"refused: content is {len(data)} bytes, the limit is {limit}"
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as handle:
            handle.write(data)
        return True, f"wrote {len(data)} bytes to {rel}"
    if op == "edit_file":
        if not os.path.isfile(full):
            return False, f"{rel} is not a file"
        if os.path.getsize(full) > limit:
            return False, f"refused: {rel} is larger than {limit} bytes"
        with open(full, encoding="utf-8", errors="surrogateescape") as handle:
            text = handle.read()
        old, new = req["old_str"], req["new_str"]
        count = text.count(old) if old else 0
        if count != 1:
            return False, f"old_str must occur exactly once in {rel}; it occurs {count} times"
        updated = text.replace(old, new, 1)
        if len(updated.encode("utf-8", "surrogateescape")) > limit:
            return False, f"refused: the edited file would be larger than {limit} bytes"
        with open(full, "w", encoding="utf-8", errors="surrogateescape") as handle:
            handle.write(updated)
        line = text[: text.index(old)].count("\n") + 1
        return True, f"edited {rel} at line {line}"
    return False, f"unknown operation {op}"

def cut(text, limit):
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return text
    head, tail = data[: limit // 2], data[len(data) - (limit - limit // 2) :]
    gone = len(data) - len(head) - len(tail)
    marker = (f"\n[… output cut: {gone:,} of {len(data):,} bytes not shown; "
              "the first and last parts are kept …]\n")
    return head.decode("utf-8", "replace") + marker + tail.decode("utf-8", "replace")

try:
    req = json.loads(sys.stdin.read())
    ok, output = main(req)
    output = cut(output, int(req["output_bytes"]))
except Exception as exc:
    ok, output = False, f"{type(exc).__name__}: {exc}"
sys.stdout.write(json.dumps({"ok": ok, "output": output}))
"""


async def run_file_tool(
    op: str,
    arguments: dict[str, Any],
    workspace: Workspace,
    *,
    file_bytes: int,
    output_bytes: int,
    timeout_s: float,
    limits: SandboxLimits | None = None,
) -> tuple[bool, str, ToolRun]:
    """``(ok, text for the model, the process run)`` of one file-tool call in the sandbox.

    ``arguments`` were checked by the caller (names and types of :mod:`.tools`' schemas).

    Raises:
        SandboxUnavailable, SandboxError, OSError: as :func:`.process.run_tool_process`.
    """
    request = {
        **arguments,
        "op": op,
        "root": str(workspace.workdir.resolve()),
        "file_bytes": file_bytes,
        "output_bytes": output_bytes,
    }
    run = await run_tool_process(
        [sys.executable, "-I", "-c", FILE_TOOL_SCRIPT],
        workspace,
        stdin=orjson.dumps(request),
        timeout_s=timeout_s,
        # the script cuts its text to output_bytes; JSON escapes may grow it up to 6 times
        limit_bytes=6 * output_bytes + 4096,
        limits=limits,
    )
    if run.timed_out:
        return False, f"timed out after {timeout_s:g} s", run
    try:
        reply = orjson.loads(run.output)
        ok, text = bool(reply["ok"]), str(reply["output"])
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return False, f"the file tool failed (exit code {run.exit_code}): {run.output[:2000]}", run
    return ok, text, run
