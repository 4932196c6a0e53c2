"""The command harness's ``case.json`` (``BENCHBOOK_CASE_FILE``), reused from case to case.

A pooled prompt directory (:mod:`benchbook.runtime.environments.pool`) keeps the harness's
private directory for the next case, and with it this one file: rewriting it in place saves a
create and an unlink per case. The harness ran in that directory and may have replaced the file,
so the rules are:

- it is opened without following a symlink (``O_NOFOLLOW``: a symlink is refused, whatever it
  points at) and without blocking (``O_NONBLOCK``: a FIFO planted there is refused, not waited
  on), never truncated by ``open`` itself;
- the open file must be a regular file with exactly one link (``fstat``: ``S_ISREG``,
  ``st_nlink == 1``), checked before a byte is changed — a hardlink to a file elsewhere must not
  let a write land there; anything else is :class:`CaseFileRefused`;
- it is written with mode 0600 (created so; set again through the descriptor if the harness
  changed it), truncated and written through the same descriptor;
- after the case it is truncated to zero bytes (:func:`zero_case_file`), under the same checks,
  so no case's input stays behind for the next case. A private directory holding only such a
  zeroed 0600 file of one link counts as empty for the pool (its ``_pristine`` check; the name
  and mode are the pool's ``KEPT_CASE_FILE`` and ``KEPT_CASE_FILE_MODE``).
"""

from __future__ import annotations

import errno
import os
import stat

from benchbook.runtime.environments.pool import KEPT_CASE_FILE as CASE_FILE_NAME
from benchbook.runtime.environments.pool import KEPT_CASE_FILE_MODE as CASE_FILE_MODE

__all__ = [
    "CASE_FILE_MODE",
    "CASE_FILE_NAME",
    "CaseFileRefused",
    "write_case_file",
    "zero_case_file",
]

_OPEN_FLAGS = os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
#: What ``open`` says of a symlink (``O_NOFOLLOW``), a FIFO or socket, a directory.
_NOT_PLAIN = (errno.ELOOP, errno.ENXIO, errno.EISDIR)


class CaseFileRefused(OSError):
    """``case.json`` is not a plain file of its own (a symlink, a hardlink, a FIFO …)."""


def _open_checked(path: str, create: bool) -> int:
    """A write descriptor on ``path`` after the checks of the module docstring (the caller
    closes it).

    Raises:
        CaseFileRefused: a symlink, not a regular file, or more than one link.
        FileNotFoundError: it is missing and not ``create``. OSError: other failures.
    """
    flags = _OPEN_FLAGS | (os.O_CREAT if create else 0)
    try:
        fd = os.open(path, flags, CASE_FILE_MODE)
    except OSError as exc:
        if exc.errno in _NOT_PLAIN:
            raise CaseFileRefused(exc.errno, f"{path} is not a plain file", path) from exc
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            raise CaseFileRefused(f"{path} is not a plain file of its own (links or type)")
        if stat.S_IMODE(info.st_mode) != CASE_FILE_MODE:
            os.fchmod(fd, CASE_FILE_MODE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_case_file(path: str, data: bytes) -> None:
    """Create ``path`` or rewrite it in place with ``data`` (mode 0600).

    Raises:
        CaseFileRefused: it was replaced by a symlink, a hardlink or a non-regular file (nothing
            was written anywhere). OSError: the write failed.
    """
    fd = _open_checked(path, create=True)
    try:
        # Written over the old bytes, then cut to its length: a truncation to zero first would
        # make ext4 write the data to disk when the file closes (``auto_da_alloc``), ~0.3 ms a
        # case; the pooled file is zero bytes long here anyway (:func:`zero_case_file`).
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.ftruncate(fd, len(data))
    finally:
        os.close(fd)


def zero_case_file(path: str) -> bool:
    """Truncate ``path`` to zero bytes after a case; whether it now is a zeroed plain file
    (False: it was missing or refused — the caller discards the directory).

    Raises nothing for the file's state; OSError only for other failures.
    """
    try:
        fd = _open_checked(path, create=False)
    except (CaseFileRefused, FileNotFoundError, PermissionError):
        return False
    try:
        os.ftruncate(fd, 0)
    finally:
        os.close(fd)
    return True
