"""Child-process entry: ``python -m bench.child TASK RESULT_FILE ARGS_JSON``.

Runs one task of ``bench.tasks`` and writes its result dict as JSON to RESULT_FILE, so the parent
reads it back; the child reports its own peak RSS (``VmHWM``, which an exec resets, unlike
``ru_maxrss`` that inherits the parent's high-water mark through fork).
"""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

from bench.tasks import TASKS


def main(argv: list[str]) -> None:
    """Run ``TASKS[argv[0]](*args)`` and write the result to ``argv[1]``."""
    task, out, args = argv[0], argv[1], orjson.loads(argv[2])
    result = TASKS[task](*args)
    result["peak_mb"] = peak_rss_mb()
    Path(out).write_bytes(orjson.dumps(result))


def peak_rss_mb() -> float:
    """This process's peak resident set size (``VmHWM``) in MB (MiB), Linux only."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("VmHWM not found in /proc/self/status")


if __name__ == "__main__":
    main(sys.argv[1:])
