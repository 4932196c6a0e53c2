"""The sandbox: the only place a process is started for a case (DESIGN "Trust boundaries").

Every process Benchbook starts for a case — a command harness, a ``command``/``tests-pass``
grader, a repo environment's ``setup`` line, the browser, an agent's tool — starts here, inside
Debian's bubblewrap (``bwrap``, the sandbox Flatpak uses; see ``docs/security.md``):

- new user, PID, IPC, UTS, cgroup and mount namespaces, and a new network namespace (nothing
  but its own loopback) unless the caller passes ``network="full"``;
- uid/gid 65534 (``nobody``) inside the user namespace, no capabilities;
- a root file system holding only: ``/usr`` and the ``/bin``, ``/sbin``, ``/lib*`` links
  read-only, a copy of a few files of ``/etc`` read-only (:data:`ETC_FILES`: loader cache, CA
  certificates, ``passwd``/``group``, resolver files, fonts — no secrets), the Python
  installation and virtual environment Benchbook runs from read-only (a harness may call
  ``sys.executable``), the policy's extra read-only paths, the call's ``readable`` paths
  read-only, and the call's ``writable`` paths (the case's workdir) read-write — each at its
  own path, so ``{workdir}`` and the ``BENCHBOOK_*`` file paths mean the same inside;
- a fresh ``/proc`` (only the sandbox's processes), a minimal ``/dev``, a private ``/tmp`` (a
  tmpfs: empty but for the directories leading to a path bound under the host's ``/tmp``);
- exactly the environment the caller passes (nothing of the server's);
- ``--die-with-parent`` and ``--new-session``: bwrap is PID 1 of the namespace, so when the
  command ends, when the case is killed (SIGKILL of bwrap) or when the server dies (even by
  ``kill -9``), every process of the sandbox dies with it — a ``setsid -f`` child included;
- resource limits (``prlimit(2)`` on bwrap's sandbox child before it runs the command,
  inherited by everything in it: :mod:`.sandbox_limits`): CPU seconds, address space,
  processes, file size, open files (:class:`SandboxLimits`).

Paths under :attr:`SandboxPolicy.denied_paths` (``BENCHBOOK_HOME``: the database, ``secret.key``,
mirrors) are never bound, whatever a caller asks: :class:`SandboxError`.

With ``SandboxPolicy.enabled`` False (``BENCHBOOK_SANDBOX=off``, refused on installations with
more than one user or workspace, or whose one user is not an installation admin) the process
starts unsandboxed, in its own session and with the same explicit environment, and its process
group is killed at the end. When bwrap is missing and
the sandbox is on, nothing starts: :class:`SandboxUnavailable` names the requirement.

This module is the sandbox's public face; the code lives by concept in :mod:`.sandbox_policy`
(the policy, denied paths, a case's limits), :mod:`.sandbox_args` (bwrap's command line),
:mod:`.sandbox_fs` (the file system inside), :mod:`.sandbox_limits` (resource limits) and
:mod:`.sandbox_run` (starting, waiting, killing).
"""

from __future__ import annotations

from benchbook.runtime.sandbox_args import SANDBOX_UID, bwrap_argv
from benchbook.runtime.sandbox_limits import SandboxLimits
from benchbook.runtime.sandbox_policy import (
    NetworkMode,
    SandboxError,
    SandboxPolicy,
    SandboxUnavailable,
    limits_for,
)
from benchbook.runtime.sandbox_run import (
    SandboxedProcess,
    SandboxResult,
    run_sandboxed,
    start_sandboxed,
)

__all__ = [
    "SANDBOX_UID",
    "NetworkMode",
    "SandboxError",
    "SandboxLimits",
    "SandboxPolicy",
    "SandboxResult",
    "SandboxUnavailable",
    "SandboxedProcess",
    "bwrap_argv",
    "limits_for",
    "run_sandboxed",
    "start_sandboxed",
]
