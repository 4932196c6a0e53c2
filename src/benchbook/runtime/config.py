"""Runtime configuration: where working copies, mirrors and traces live, which browser runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from benchbook.runtime.sandbox import SandboxPolicy


@dataclass(frozen=True)
class RuntimeConfig:
    """Paths and programs the runtime uses.

    Attributes:
        work_root: parent of the per-case private working directories (removed after each case).
        mirrors: the local mirror cache, ``BENCHBOOK_HOME/mirrors/<host>/<owner>/<repo>.git``.
        chromium: the browser binary for ``browser`` environments (Debian's by default).
        tail_bytes: how much of a command harness's stdout/stderr the trace keeps (the end).
        keep_workdirs: leave working directories in place after the case (debugging).
        env_providers: extra environment kinds a provider is configured for (os-use, images).
        sandbox: how every case process is started (``runtime/sandbox.py``); on by default.
        browser_allowed_hosts: ``host`` / ``host:port`` entries a browser case may open
            (``environments/egress.py``); empty: none.
        git_allowed_hosts: non-public ``host`` / ``host:port`` entries the server's git may
            clone or fetch from (``environments/git_egress.py``); public hosts need none.
    """

    work_root: Path
    mirrors: Path
    chromium: str = "/usr/bin/chromium"
    tail_bytes: int = 8192
    keep_workdirs: bool = False
    env_providers: frozenset[str] = field(default_factory=frozenset)
    sandbox: SandboxPolicy = field(default_factory=SandboxPolicy)
    browser_allowed_hosts: tuple[str, ...] = ()
    git_allowed_hosts: tuple[str, ...] = ()
