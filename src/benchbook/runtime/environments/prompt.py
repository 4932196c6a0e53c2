"""The ``prompt`` environment (SPEC H.3): an empty private working directory.

Its snapshot's ``output`` holds the small text files the harness left there (a plan written to
``plan.md``, say): UTF-8 files only, in path order, at most :data:`OUTPUT_LIMIT_BYTES` in total;
None when nothing was left.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from benchbook.contracts.run import EnvSnapshot
from benchbook.runtime.environments.workspace import Workspace

#: Total size of the text files a prompt snapshot keeps (bytes).
OUTPUT_LIMIT_BYTES = 64 * 1024


def collect_output(workdir: Path, limit_bytes: int = OUTPUT_LIMIT_BYTES) -> dict[str, str] | None:
    """Text files under ``workdir`` as ``{relative posix path: text}``.

    Binary or undecodable files, files under dot-directories and files that would push the
    total past ``limit_bytes`` are left out. Returns None when nothing qualifies.
    """
    output: dict[str, str] = {}
    total_bytes = 0
    for path in sorted(workdir.rglob("*")):
        rel = path.relative_to(workdir)
        if any(part.startswith(".") for part in rel.parts[:-1]) or not path.is_file():
            continue
        if path.is_symlink() or total_bytes + path.stat().st_size > limit_bytes:
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        output[rel.as_posix()] = text
        total_bytes += len(data)
    return output or None


def _empty(workdir: Path) -> bool:
    """Whether ``workdir`` is a directory with nothing in it (False when unreadable: the full
    collection then decides, and fails, as before)."""
    try:
        with os.scandir(workdir) as entries:
            return next(entries, None) is None
    except OSError:
        return False


def open_prompt(workdir: Path) -> Workspace:
    """A ready prompt workspace on the (empty) ``workdir``."""

    async def snapshot() -> EnvSnapshot:
        # A directory the harness left empty (every openai harness's) is read on the loop: one
        # cached listing costs less CPU than a thread hop (bench/openai_harness.py).
        if _empty(workdir):
            return EnvSnapshot(output=None)
        return EnvSnapshot(output=await asyncio.to_thread(collect_output, workdir))

    return Workspace(workdir=workdir, kind="prompt", snapshot_fn=snapshot)
