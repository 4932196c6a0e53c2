"""The runtime: runs a harness on case inputs only; never imports eval and never sees gold.

Public interface (used by the evaluation layer's executors)::

    config = RuntimeConfig(work_root=..., mirrors=..., chromium="/usr/bin/chromium")
    async with open_environment(case_input, config) as workspace:   # raises nothing: see below
        result = await run_harness(harness, case_input, workspace, secrets)
        ...  # eval grades here; ``workspace.workdir`` still exists (command/tests-pass graders)
    # the private working copy is removed on exit

- :func:`open_environment` provisions the case's environment (SPEC H.3) and yields a
  :class:`Workspace`; an environment that cannot be provided (os-use, an image without a
  provider, a failed clone or audit) yields a workspace whose ``error`` says why, and
  :func:`run_harness` then returns ``RuntimeResult(status="error", error=workspace.error)``
  without starting the harness.
- :func:`run_harness` never raises for a harness failure: timeouts, non-zero exits, exceptions in
  a python callable and HTTP errors of an openai endpoint become ``status = "error"`` with the
  reason (``timeout``, ``exit code 2``, ``ValueError: …``); the trace holds what was captured.
"""

from __future__ import annotations

from benchbook.runtime.config import RuntimeConfig
from benchbook.runtime.environments import Workspace, open_environment
from benchbook.runtime.harnesses import run_harness

__all__ = ["RuntimeConfig", "Workspace", "open_environment", "run_harness"]
