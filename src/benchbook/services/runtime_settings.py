"""The runtime's settings for executing or grading a run: paths, sandbox and browser egress,
read from the installation's settings."""

from __future__ import annotations

from dataclasses import replace

from benchbook.runtime import RuntimeConfig
from benchbook.services.sandboxing import default_work_root, sandbox_policy
from benchbook.settings import Settings


def runtime_config(settings: Settings, argv_files: bool = False) -> RuntimeConfig:
    """The runtime's paths, sandbox and browser egress from the settings (work root default:
    ``<tmp>/benchbook-work``); ``argv_files``: the run's command harness may have the files its
    ``argv`` names bound (an installation admin registered it: ``SandboxPolicy.argv_files``)."""
    work_root = default_work_root(settings)
    return RuntimeConfig(
        work_root=work_root,
        mirrors=settings.home / "mirrors",
        chromium=settings.chromium,
        sandbox=replace(sandbox_policy(settings, work_root), argv_files=argv_files),
        browser_allowed_hosts=tuple(settings.browser_allowed_hosts),
        git_allowed_hosts=tuple(settings.git_allowed_hosts),
    )
