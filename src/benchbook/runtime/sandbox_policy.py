"""The installation's sandbox policy (:mod:`benchbook.runtime.sandbox`): whether case processes
are sandboxed, with which binaries and limits, and which paths no sandbox may ever see."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from benchbook.errors import BenchbookError
from benchbook.runtime.sandbox_limits import SandboxLimits

NetworkMode = Literal["none", "full"]
"""``none``: a private network namespace (its own loopback only); ``full``: the host's network."""


class SandboxError(BenchbookError):
    """A sandboxed process cannot be started as asked (a denied path, a bad argument)."""

    code = "sandbox"


class SandboxUnavailable(SandboxError):
    """The sandbox is on but bubblewrap (or ``prlimit``) is not installed."""

    code = "sandbox_unavailable"


@dataclass(frozen=True)
class SandboxPolicy:
    """The installation's sandbox (from Settings, carried by ``RuntimeConfig.sandbox``).

    Attributes:
        enabled: False only for ``BENCHBOOK_SANDBOX=off`` (single-user installs).
        bwrap: the bubblewrap binary.
        prlimit: util-linux's ``prlimit`` binary, for :func:`bwrap_argv`'s command lines
            (:func:`start_sandboxed` applies the limits itself).
        limits: the default limits; a call may pass its own (the case's ``resources``).
        ro_paths: extra paths every sandbox sees read-only (an admin's toolchains).
        denied_paths: paths never bound, whatever is asked (``BENCHBOOK_HOME``), nor any path
            holding one.
        allowed_inside: subtrees of a denied path that may still be bound (the work root,
            when an installation keeps it inside ``BENCHBOOK_HOME``).
        python_prefixes: bind the Python installation and virtual environment Benchbook runs
            from, read-only (harnesses and graders that call ``python``/``sys.executable``).
        argv_files: bind the files a ``command`` harness names by absolute path in its
            registered ``argv`` (its scripts). Only for a harness an installation admin
            registered: the run sets it (``services.code_rules``); off, such a file the
            sandbox does not already show refuses the case (fail closed).
    """

    enabled: bool = True
    bwrap: str = "/usr/bin/bwrap"
    prlimit: str = "/usr/bin/prlimit"
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    ro_paths: tuple[Path, ...] = ()
    denied_paths: tuple[Path, ...] = ()
    python_prefixes: bool = True
    allowed_inside: tuple[Path, ...] = ()
    argv_files: bool = False

    def may_bind(self, path: Path) -> bool:
        """Whether ``path`` may be bound: it neither holds nor lies in a denied path (unless
        inside ``allowed_inside``)."""
        return _allowed(self, path)

    def check_available(self) -> None:
        """Raise :class:`SandboxUnavailable` when the sandbox is on and bwrap is missing."""
        if not self.enabled:
            return
        if not os.access(self.bwrap, os.X_OK):
            raise SandboxUnavailable(
                f"the sandbox needs bubblewrap at {self.bwrap}, which is not installed (Debian:"
                " apt-get install bubblewrap); Benchbook starts no case process without it"
                " (docs/security.md)",
                {"requirement": "bubblewrap", "path": self.bwrap},
            )


def _under(path: str, parent: str) -> bool:
    """Whether the resolved ``path`` is ``parent`` or lies in it (both resolved)."""
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def _allowed(policy: SandboxPolicy, path: Path) -> bool:
    return PathRules(policy).allows(path)


class PathRules:
    """A policy's denied and exempt paths, resolved (symlinks followed) when made: one call's
    checks — plain strings, not ``Path`` objects, as this runs for every case start
    (``bench/command_run.py``)."""

    def __init__(self, policy: SandboxPolicy) -> None:
        self.denied = [os.path.realpath(p) for p in policy.denied_paths]
        self.exempt = [os.path.realpath(p) for p in policy.allowed_inside]

    def allows(self, path: Path) -> bool:
        """Whether ``path`` (resolved now) neither holds nor lies in a denied path, unless it
        lies in an exempt one."""
        real = os.path.realpath(path)
        if any(_under(d, real) for d in self.denied):
            return False
        inside = any(_under(real, d) for d in self.denied)
        return not inside or any(_under(real, e) for e in self.exempt)

    def check(self, paths: Iterable[Path]) -> None:
        """Refuse the first of ``paths`` that is not :meth:`allows`-ed.

        Raises:
            SandboxError: that path (details: ``path``).
        """
        for path in paths:
            if not self.allows(path):
                raise SandboxError(
                    f"the sandbox never exposes {path}: it holds or contains Benchbook's data "
                    "directory (database, secret.key) or the server's own configuration",
                    {"path": str(path)},
                )


def limits_for(
    policy: SandboxPolicy,
    *,
    timeout_s: float | None = None,
    cpu_millicores: int | None = None,
    memory_mb: int | None = None,
) -> SandboxLimits:
    """The limits of one case: the policy's defaults, narrowed by the case's ``resources``.

    ``memory_mb`` becomes the address-space limit (MiB); ``cpu_millicores`` with ``timeout_s``
    becomes CPU seconds (``ceil(timeout_s × millicores / 1000)``, at least 1). Neither ever
    raises a limit above the installation's default.
    """
    base = policy.limits
    cpu_s = base.cpu_s
    if cpu_millicores is not None and timeout_s is not None:
        wanted = max(1, -(-int(timeout_s * cpu_millicores) // 1000))
        cpu_s = wanted if cpu_s is None else min(cpu_s, wanted)
    address = base.address_space_bytes
    if memory_mb is not None:
        wanted_bytes = memory_mb << 20
        address = wanted_bytes if address is None else min(address, wanted_bytes)
    return replace(base, cpu_s=cpu_s, address_space_bytes=address)
