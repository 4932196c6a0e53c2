"""Child-process entry for ``bench.runs``: ``python -m bench.run_child TASK RESULT_FILE ARGS_JSON``.

Like :mod:`bench.child` (same peak-RSS reading, ``VmHWM``) but over :data:`bench.run_tasks.TASKS`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

from bench.child import peak_rss_mb
from bench.run_tasks import TASKS


def main(argv: list[str]) -> None:
    """Run ``TASKS[argv[0]](*args)`` and write the result (plus ``peak_mb``) to ``argv[1]``."""
    task, out, args = argv[0], argv[1], orjson.loads(argv[2])
    result = TASKS[task](*args)
    result["peak_mb"] = peak_rss_mb()
    Path(out).write_bytes(orjson.dumps(result))


if __name__ == "__main__":
    main(sys.argv[1:])
