"""The file system a sandboxed process sees (:mod:`benchbook.runtime.sandbox`): the system
directories, a private copy of a few ``/etc`` files, and Benchbook's Python installation."""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
import shutil
import stat
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

#: Files and directories of ``/etc`` bound read-only when present (no secrets among them).
ETC_FILES = (
    "alternatives",
    "ca-certificates",
    "ca-certificates.conf",
    "chromium",
    "chromium.d",
    "fonts",
    "gai.conf",
    "group",
    "host.conf",
    "hosts",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "mime.types",
    "nsswitch.conf",
    "passwd",
    "protocols",
    "resolv.conf",
    "services",
    "ssl",
)
#: Top-level system directories: bound read-only, or recreated as the same symlink (usrmerge).
_SYSTEM_DIRS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


def python_prefixes(allowed: Callable[[Path], bool]) -> list[Path]:
    """Benchbook's Python installation and virtual environment, minus those ``allowed``
    refuses (a prefix holding ``BENCHBOOK_HOME`` is left out, not an error)."""
    return [prefix for prefix in _prefix_candidates() if allowed(prefix)]


@functools.cache
def _prefix_candidates() -> tuple[Path, ...]:
    """The interpreter's prefixes, as given and resolved, minus ``/usr`` and ``/`` (fixed for
    the process's life: computed once, not per case start)."""
    prefixes = {Path(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    prefixes |= {p.resolve() for p in prefixes}
    return tuple(sorted(p for p in prefixes if p not in (Path("/usr"), Path("/"))))


def _world_unreadable(directory: str, names: list[str]) -> set[str]:
    """``copytree``'s ignore: entries another local user could not read (``/etc/ssl/private``)."""
    hidden = set()
    for name in names:
        try:
            mode = os.lstat(os.path.join(directory, name)).st_mode
        except OSError:
            hidden.add(name)
            continue
        if stat.S_ISLNK(mode):
            continue  # resolved inside the sandbox, against what is bound there
        needed = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
        if mode & needed != needed:
            hidden.add(name)
    return hidden


def _copy_etc() -> Path:
    """A private copy of the :data:`ETC_FILES` of ``/etc`` (symlinks kept; only what any local
    user may read — ``/etc/ssl/private`` stays out), made once per process and removed at
    exit: one read-only bind instead of one per file saves ~3 ms a start
    (``bench/sandbox.py``). Changes to ``/etc`` after the process started are not seen."""
    root = Path(tempfile.mkdtemp(prefix="benchbook-sandbox-etc-"))
    atexit.register(shutil.rmtree, root, True)
    for name in ETC_FILES:
        if _world_unreadable("/etc", [name]):
            continue
        source = Path("/etc") / name
        with contextlib.suppress(OSError, shutil.Error):  # absent: not part of the sandbox
            if source.is_dir() and not source.is_symlink():
                shutil.copytree(source, root / name, symlinks=True, ignore=_world_unreadable)
            elif source.is_symlink() or source.is_file():
                shutil.copy2(source, root / name, follow_symlinks=False)
    root.chmod(0o755)
    return root


_ETC_LOCK = threading.Lock()
_ETC: list[Path] = []


def sandbox_etc() -> Path:
    """The process's copy of the sandbox's ``/etc`` (made on first use, thread-safe)."""
    with _ETC_LOCK:
        if not _ETC or not _ETC[0].is_dir():
            _ETC[:] = [_copy_etc()]
        return _ETC[0]


def system_roots() -> list[str]:
    """The resolved host paths every sandbox shows at the same path: ``/usr``, the ``/bin``,
    ``/sbin``, ``/lib*`` directories and the :data:`ETC_FILES` of ``/etc`` (copies of them)."""
    tops = ["/usr", *_SYSTEM_DIRS, *(f"/etc/{name}" for name in ETC_FILES)]
    return [os.path.realpath(top) for top in tops if os.path.lexists(top)]


def system_binds() -> list[str]:
    """bwrap arguments: ``/usr`` and the top-level system links or directories read-only, the
    ``/etc`` copy read-only at ``/etc``."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in _SYSTEM_DIRS:
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    return [*args, "--ro-bind", str(sandbox_etc()), "/etc"]
