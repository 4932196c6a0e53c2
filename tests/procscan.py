"""Finding processes by a marker in their command line, from ``/proc`` (no psutil)."""

from __future__ import annotations

import time
from pathlib import Path


def processes_with(marker: str) -> list[int]:
    """Pids of the live (not zombie) processes whose command line contains ``marker``."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (
                (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            )
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def wait_gone(marker: str, timeout_s: float = 5.0) -> list[int]:
    """Wait until no process carries ``marker``; the pids still alive after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while (left := processes_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left
