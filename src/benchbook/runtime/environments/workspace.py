"""The workspace a provider hands to a harness (:mod:`benchbook.runtime.environments`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchbook.contracts.run import EnvAudit, EnvSnapshot
from benchbook.runtime.sandbox import SandboxPolicy

SnapshotFn = Callable[[], Awaitable[EnvSnapshot]]


@dataclass
class Workspace:
    """One case's provisioned environment, as handed to a harness.

    Attributes:
        workdir: the private working directory (repo environments: the working copy).
        kind: the env kind (``prompt``, ``repo``, ``browser``, ``os-use``).
        env_vars: extra environment variables for the harness (``BENCHBOOK_CDP_URL`` …).
        audit: the pre-harness audit of a repo environment (None for other kinds).
        error: why the environment could not be provided; None when it is ready.
        snapshot_fn: the provider's snapshot hook (None: an empty snapshot).
        tail_bytes: bytes of a command harness's stdout/stderr kept in the trace.
        sandbox: how the case's processes start (``RuntimeConfig.sandbox``).
        cdp_relay: ``(port, socket)`` of a browser case: the Unix socket forwarding to
            Chromium's DevTools port, for harnesses without network (``cdp_relay.py``).
        pooled: the case directory goes back to the prompt-directory pool (``pool.py``): a
            harness may leave its private directory (``<workdir>/../harness``) there empty
            but for a zeroed ``case.json`` (``harnesses/case_file.py``), for the next case,
            instead of removing it.
    """

    workdir: Path
    kind: str = "prompt"
    env_vars: dict[str, str] = field(default_factory=dict)
    audit: EnvAudit | None = None
    error: str | None = None
    snapshot_fn: SnapshotFn | None = field(default=None, repr=False)
    tail_bytes: int = 8192
    sandbox: SandboxPolicy = field(default_factory=SandboxPolicy)
    cdp_relay: tuple[int, Path] | None = None
    pooled: bool = False

    async def snapshot(self) -> EnvSnapshot:
        """The environment after the harness (diff, output files, URL, screenshot, audit).

        Raises:
            Exception: whatever the provider's hook raises; :func:`run_harness` records it.
        """
        snap = await self.snapshot_fn() if self.snapshot_fn is not None else EnvSnapshot()
        if self.audit is not None and snap.audit is None:
            snap.audit = self.audit
        return snap
