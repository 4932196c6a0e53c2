"""Environment providers (SPEC H.3): one per env kind, chosen per case.

:func:`open_environment` provisions a case's environment in a private directory under
``RuntimeConfig.work_root`` and yields a :class:`Workspace`; the directory (and any browser
process) is removed on exit unless ``keep_workdirs``. It never raises for an environment that
cannot be provided: the workspace's ``error`` says why and the harness is not started.

Kinds:

- ``prompt`` (:mod:`.prompt`): an empty working directory.
- ``repo`` (:mod:`.repo`): a working copy from the mirror cache or from ``files``, audited.
- ``browser`` (:mod:`.browser`): a headless Chromium reachable at ``BENCHBOOK_CDP_URL``.
- ``os-use`` and cases with an ``image``: only with a provider configured in
  ``RuntimeConfig.env_providers``; otherwise ``no environment provider for os-use`` / ``image``.

:class:`Workspace` lives in :mod:`.workspace` (re-exported here): the providers import it from
there, so no module of this package imports the package itself.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

from benchbook.contracts.run import CaseInput
from benchbook.runtime.config import RuntimeConfig
from benchbook.runtime.environments.pool import PROMPT_DIRECTORIES
from benchbook.runtime.environments.workspace import SnapshotFn, Workspace


def _missing_provider(case_input: CaseInput, config: RuntimeConfig) -> str | None:
    """``no environment provider for <kind>`` when the case needs one that is not configured."""
    kind = case_input.env.kind
    if kind == "os-use" and "os-use" not in config.env_providers:
        return "no environment provider for os-use"
    if case_input.image is not None and "image" not in config.env_providers:
        return "no environment provider for image"
    return None


@asynccontextmanager
async def open_environment(
    case_input: CaseInput, config: RuntimeConfig
) -> AsyncIterator[Workspace]:
    """Provision ``case_input.env`` for one (case, sample) and clean it up afterwards.

    Args:
        case_input: the case as the harness may see it (no gold).
        config: paths and programs of the runtime.

    Yields:
        Workspace: ready (``error`` None) or failed (``error`` set; the harness must not run).
        Its ``workdir`` exists until the block exits.

    Raises:
        OSError: only when ``config.work_root`` itself cannot be created or written.
    """
    # Directory writes run in a thread: on a disk file system mkdir/rmdir cost milliseconds,
    # and on the event loop they stalled every other case (bench/runs.py: 2.1 ms vs 0.1 ms a
    # case). Prompt cases reuse directories their predecessors left untouched
    # (environments/pool.py); taking one from the pool and checking it on the way back only
    # read memory and cached metadata, so they stay on the loop: a thread hop costs more CPU
    # than they do (bench/openai_harness.py).
    pooled = _poolable(case_input, config)
    case_root = PROMPT_DIRECTORIES.take_free(config.work_root) if pooled else None
    if case_root is None and pooled:
        case_root = await asyncio.to_thread(PROMPT_DIRECTORIES.take, config.work_root)
    elif case_root is None:
        case_root = await asyncio.to_thread(_make_case_root, case_input, config)
    try:
        async with AsyncExitStack() as stack:
            workspace = await _provision(case_input, config, case_root, stack)
            workspace.tail_bytes = config.tail_bytes
            workspace.sandbox = config.sandbox
            workspace.pooled = pooled
            yield workspace
    finally:
        kept = pooled and PROMPT_DIRECTORIES.keep(config.work_root, case_root)
        if not kept and not config.keep_workdirs:
            await asyncio.to_thread(shutil.rmtree, case_root, True)


def _poolable(case_input: CaseInput, config: RuntimeConfig) -> bool:
    """Plain prompt cases (no image, no provider question) when directories are not kept."""
    return case_input.env.kind == "prompt" and case_input.image is None and not config.keep_workdirs


def _make_case_root(case_input: CaseInput, config: RuntimeConfig) -> Path:
    """``<work_root>/<case id>-<sample>-<random>/work`` created; returns the case root."""
    config.work_root.mkdir(parents=True, exist_ok=True)
    safe_id = "".join(c if c.isalnum() or c in "-_." else "_" for c in case_input.case_id)[:60]
    root = Path(tempfile.mkdtemp(prefix=f"{safe_id}-{case_input.sample}-", dir=config.work_root))
    (root / "work").mkdir()
    return root


async def _provision(
    case_input: CaseInput, config: RuntimeConfig, case_root: Path, stack: AsyncExitStack
) -> Workspace:
    """Dispatch to the provider of ``case_input.env.kind``; failures become ``error``."""
    kind = case_input.env.kind
    workdir = case_root / "work"  # made by _make_case_root
    problem = _missing_provider(case_input, config)
    if problem is not None:
        return Workspace(workdir=workdir, kind=kind, error=problem)
    try:
        return await _open_kind(case_input, config, case_root, workdir, stack)
    except Exception as exc:  # a provider bug is still an environment error, never a crash
        return Workspace(
            workdir=workdir, kind=kind, error=f"environment: {type(exc).__name__}: {exc}"
        )


async def _open_kind(
    case_input: CaseInput,
    config: RuntimeConfig,
    case_root: Path,
    workdir: Path,
    stack: AsyncExitStack,
) -> Workspace:
    kind = case_input.env.kind
    # Imported lazily so a prompt-only deployment never loads the git or browser machinery.
    if kind == "repo":
        from benchbook.runtime.environments.repo import open_repo

        return await open_repo(case_input, config, case_root, workdir)
    if kind == "browser":
        from benchbook.runtime.environments.browser import open_browser

        return await stack.enter_async_context(open_browser(case_input, config, case_root, workdir))
    if kind == "os-use":
        # A configured os-use provider runs outside this process; locally the harness gets the
        # display name and an empty working directory.
        display = getattr(case_input.env, "display", ":99")
        return Workspace(workdir=workdir, kind=kind, env_vars={"DISPLAY": display})
    from benchbook.runtime.environments.prompt import open_prompt

    return open_prompt(workdir)


__all__ = ["SnapshotFn", "Workspace", "open_environment"]
