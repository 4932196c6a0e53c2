"""bubblewrap's command line for one sandboxed process (:mod:`benchbook.runtime.sandbox`):
namespaces, identity, the file system it sees (:mod:`.sandbox_fs`) and the working directory."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from benchbook.runtime.sandbox_fs import python_prefixes, system_binds, system_roots
from benchbook.runtime.sandbox_limits import SandboxLimits
from benchbook.runtime.sandbox_policy import (
    NetworkMode,
    PathRules,
    SandboxError,
    SandboxPolicy,
    SandboxUnavailable,
)

#: The uid and gid a sandboxed process runs as, inside its user namespace.
SANDBOX_UID = 65534


def shown_anyway(policy: SandboxPolicy, path: Path) -> bool:
    """Whether every sandbox of ``policy`` already shows the file ``path`` (resolved, symlinks
    followed) read-only without binding it: it lies in ``/usr``, the system directories, the
    copied ``/etc`` files, Benchbook's Python or ``BENCHBOOK_SANDBOX_RO_PATHS``."""
    real = os.path.realpath(path)
    rules = PathRules(policy)
    roots = system_roots() + [os.path.realpath(p) for p in policy.ro_paths]
    if policy.python_prefixes:
        roots += [os.path.realpath(p) for p in python_prefixes(rules.allows)]
    inside = any(real == r or real.startswith(r.rstrip("/") + "/") for r in roots)
    return inside and rules.allows(Path(real))


def bwrap_argv(
    argv: Sequence[str],
    *,
    policy: SandboxPolicy,
    cwd: Path,
    writable: Sequence[Path] = (),
    readable: Sequence[Path] = (),
    network: NetworkMode = "none",
    limits: SandboxLimits | None = None,
) -> list[str]:
    """A full command line (``prlimit … -- bwrap … -- argv``) of one sandboxed process, for a
    caller that starts it itself; :func:`start_sandboxed` applies the limits without the extra
    ``prlimit`` process (:mod:`.sandbox_limits`).

    Raises:
        SandboxError: a path to bind lies in (or contains) a denied path; empty ``argv``.
        SandboxUnavailable: bwrap or prlimit is missing.
    """
    if not os.access(policy.prlimit, os.X_OK):
        raise SandboxUnavailable(
            f"this command line needs prlimit at {policy.prlimit} (Debian: util-linux)",
            {"requirement": "prlimit", "path": policy.prlimit},
        )
    prefix = [policy.prlimit, *(limits or policy.limits).prlimit_args(), "--", policy.bwrap]
    args = bwrap_args(argv, policy, cwd, writable, readable, network)
    return prefix + args


def bwrap_args(
    argv: Sequence[str],
    policy: SandboxPolicy,
    cwd: Path,
    writable: Sequence[Path],
    readable: Sequence[Path],
    network: NetworkMode,
) -> list[str]:
    """bwrap's arguments (without the program name) for ``argv``; see :func:`bwrap_argv`.

    Raises:
        SandboxError: empty ``argv``; a path to bind lies in (or contains) a denied path.
        SandboxUnavailable: bwrap is missing.
    """
    if not argv:
        raise SandboxError("nothing to run: the command is empty")
    policy.check_available()
    ro = [*policy.ro_paths, *readable]
    rules = PathRules(policy)  # the denied paths resolved once for the whole call
    rules.check([*ro, *writable])  # cwd is not bound: a chdir inside the sandbox
    args = [
        "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
        "--unshare-cgroup-try", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
        "--hostname", "benchbook-case", "--die-with-parent", "--new-session",
    ]  # fmt: skip
    if network == "none":
        args.append("--unshare-net")
    args += system_binds()
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    if policy.python_prefixes:
        for path in python_prefixes(rules.allows):
            args += ["--ro-bind-try", str(path), str(path)]
    for path in ro:
        args += ["--ro-bind-try", str(path), str(path)]
    for path in writable:
        args += ["--bind", str(path), str(path)]
    args += ["--chdir", str(cwd), "--", *argv]
    return args
