"""Reusing empty prompt directories between cases.

Creating and removing two directories per case cost ~2 ms of disk work on this machine's ext4
``/tmp`` (``bench/runs.py``): more than the rest of a trivial case. A prompt case's directory
that the harness left exactly as it was made — nothing inside, same mode, not replaced by a
link — is handed to the next prompt case instead of being removed (with the command harness's
private directory, emptied but for a zeroed ``case.json`` rewritten by the next case, beside
it: two directory creations and removals and a file creation and removal fewer per case);
anything else is removed as before. Pooled directories have neutral names (``prompt-…``) so no
case id outlives its case, and the pool is emptied when the process exits.
"""

from __future__ import annotations

import atexit
import os
import shutil
import stat
import tempfile
import threading
from pathlib import Path

#: The one file a command harness's private directory keeps between cases, zeroed: its
#: ``case.json``, rewritten in place by the next case (``runtime/harnesses/case_file.py``).
KEPT_CASE_FILE = "case.json"
KEPT_CASE_FILE_MODE = 0o600
#: Directories kept per work root (a run's concurrency rarely exceeds it).
POOL_LIMIT = 64


class DirectoryPool:
    """Free ``<root>/work`` pairs per work root, thread-safe."""

    def __init__(self, limit: int = POOL_LIMIT) -> None:
        self.limit = limit
        self._free: dict[Path, list[Path]] = {}
        self._lock = threading.Lock()

    def take_free(self, work_root: Path) -> Path | None:
        """A pooled case root (no file system work: safe on the event loop), or None."""
        with self._lock:
            free = self._free.get(work_root)
            return free.pop() if free else None

    def take(self, work_root: Path) -> Path:
        """A case root with an empty ``work`` directory: a pooled one, else a new one."""
        pooled = self.take_free(work_root)
        if pooled is not None:
            return pooled
        work_root.mkdir(parents=True, exist_ok=True)
        root = Path(tempfile.mkdtemp(prefix="prompt-", dir=work_root))
        (root / "work").mkdir(mode=0o700)
        return root

    def give(self, work_root: Path, root: Path) -> None:
        """Keep ``root`` for the next case when it is exactly as made; remove it otherwise."""
        if not self.keep(work_root, root):
            shutil.rmtree(root, ignore_errors=True)

    def keep(self, work_root: Path, root: Path) -> bool:
        """Pool ``root`` when there is room and it is exactly as made (a few reads of two
        directories' metadata, no writes: safe on the event loop); False: the caller removes
        it."""
        with self._lock:
            room = len(self._free.get(work_root, [])) < self.limit
        if room and _pristine(root):
            with self._lock:
                self._free.setdefault(work_root, []).append(root)
            return True
        return False

    def clear(self) -> None:
        """Remove every pooled directory."""
        with self._lock:
            roots = [r for free in self._free.values() for r in free]
            self._free.clear()
        for root in roots:
            shutil.rmtree(root, ignore_errors=True)


def _pristine(root: Path) -> bool:
    """``root`` holds only ``work`` and perhaps ``harness`` (the private directory a command
    harness empties for the next case), each a real directory of mode 0700: ``work`` empty,
    ``harness`` empty or holding only ``case.json`` as a zeroed 0600 regular file of one link
    (:data:`KEPT_CASE_FILE`)."""
    try:
        names = sorted(os.listdir(root))
        if names not in (["work"], ["harness", "work"]):
            return False
        for name in names:
            info = os.lstat(root / name)
            if not stat.S_ISDIR(info.st_mode) or stat.S_IMODE(info.st_mode) != 0o700:
                return False
            inside = os.listdir(root / name)
            if name == "harness" and inside == [KEPT_CASE_FILE]:
                if not _zeroed(os.path.join(root, name, KEPT_CASE_FILE)):
                    return False
            elif inside:
                return False
        return True
    except OSError:
        return False


def _zeroed(path: str) -> bool:
    """``path`` is a regular file of one link, mode 0600, zero bytes (``lstat``: no symlink
    followed)."""
    info = os.lstat(path)
    return (
        stat.S_ISREG(info.st_mode)
        and info.st_nlink == 1
        and stat.S_IMODE(info.st_mode) == KEPT_CASE_FILE_MODE
        and info.st_size == 0
    )


PROMPT_DIRECTORIES = DirectoryPool()
atexit.register(PROMPT_DIRECTORIES.clear)
