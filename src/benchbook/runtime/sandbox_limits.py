"""Resource limits of a sandboxed process tree (:mod:`benchbook.runtime.sandbox`).

Limits are applied to bwrap's sandbox child before it runs the command: bwrap reports the
child's pid on ``--info-fd`` and waits on ``--block-fd``; ``prlimit(2)`` sets each limit on
that pid (inherited by everything it starts), then the sandbox is released. That saves the
``exec`` of util-linux's ``prlimit`` per case (~1 ms of CPU, ``bench/sandbox.py``);
:meth:`SandboxLimits.prlimit_args` keeps the ``prlimit`` form for a command line of its own.
A case's own limits: :func:`benchbook.runtime.sandbox_policy.limits_for`.
"""

from __future__ import annotations

import resource
from dataclasses import dataclass


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits of one sandboxed process tree (``None``: not limited).

    Attributes:
        cpu_s: CPU seconds (``RLIMIT_CPU``; per process, SIGKILL past it).
        address_space_bytes: virtual memory per process (``RLIMIT_AS``).
        processes: processes and threads of the sandbox's uid (``RLIMIT_NPROC``; the kernel
            does not enforce it for a server running as root — see ``docs/security.md``).
        file_size_bytes: largest file a process may write (``RLIMIT_FSIZE``).
        open_files: open file descriptors per process (``RLIMIT_NOFILE``).
    """

    cpu_s: int | None = 3600
    address_space_bytes: int | None = 8 << 30
    processes: int | None = 1024
    file_size_bytes: int | None = 1 << 30
    open_files: int | None = 4096

    def prlimit_args(self) -> list[str]:
        """``prlimit`` options for the limits that are set (soft = hard)."""
        pairs = (
            ("--cpu", self.cpu_s),
            ("--as", self.address_space_bytes),
            ("--nproc", self.processes),
            ("--fsize", self.file_size_bytes),
            ("--nofile", self.open_files),
        )
        return [f"{flag}={value}" for flag, value in pairs if value is not None]

    def rlimits(self) -> list[tuple[int, int]]:
        """``(RLIMIT_*, value)`` for the limits that are set (soft = hard)."""
        pairs = (
            (resource.RLIMIT_CPU, self.cpu_s),
            (resource.RLIMIT_AS, self.address_space_bytes),
            (resource.RLIMIT_NPROC, self.processes),
            (resource.RLIMIT_FSIZE, self.file_size_bytes),
            (resource.RLIMIT_NOFILE, self.open_files),
        )
        return [(which, value) for which, value in pairs if value is not None]

    def apply(self, pid: int) -> None:
        """Set every limit on process ``pid`` (``prlimit(2)``).

        Raises:
            OSError: the kernel refused one (the caller fails closed).
        """
        for which, value in self.rlimits():
            resource.prlimit(pid, which, (value, value))
