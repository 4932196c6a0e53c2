"""The files a ``command`` harness names by absolute path in its ``argv`` (a security finding:
a workspace admin read ``/root/.bashrc`` and the server's sources by naming them): bound into
the sandbox only for a harness an installation admin registered (``SandboxPolicy.argv_files``,
set per run by the service); otherwise the case is refused naming ``config.argv[i]`` and
nothing of the file reaches the answer. Real bubblewrap."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from benchbook.contracts.dataset import PromptEnv
from benchbook.contracts.harness import CommandHarness
from benchbook.contracts.run import CaseInput
from benchbook.runtime import RuntimeConfig
from benchbook.runtime.sandbox import SandboxPolicy
from benchbook.services.sandboxing import sandbox_policy
from benchbook.settings import Settings
from tests.runtime.runner import RunCase

SECRET = "server-private-5e1d"
READER = 'for f in "$@"; do head -c 200 "$f" | tr -d "\\000"; done'  # a binary's NULs dropped


def _harness(argv: list[str]) -> CommandHarness:
    return CommandHarness.model_validate({"id": "h", "version": "1.0.0", "config": {"argv": argv}})


def _case() -> CaseInput:
    return CaseInput(case_id="c1", env=PromptEnv(), task="t", timeout_s=60)


@pytest.fixture
def server_file(tmp_path: Path) -> Path:
    """A file of the server's user outside every path the sandbox shows (``~/.bashrc``)."""
    path = tmp_path / "outside" / ".bashrc"
    path.parent.mkdir()
    path.write_text(SECRET)
    return path


def _with(config: RuntimeConfig, **policy: Any) -> RuntimeConfig:
    return replace(config, sandbox=replace(config.sandbox, **policy))


def test_a_file_named_in_argv_is_not_bound_unless_an_installation_admin_registered_it(
    run_case: RunCase, runtime_config: RuntimeConfig, server_file: Path
) -> None:
    harness = _harness(["sh", "-c", READER, "x", "/usr/bin/env", str(server_file)])
    result = run_case(harness, _case(), config=runtime_config)  # argv_files off: the default
    assert result.status == "error"
    assert result.error is not None
    assert result.error.startswith(f"sandbox: config.argv[5]: {server_file} is a file outside")
    assert "BENCHBOOK_SANDBOX_RO_PATHS" in result.error
    assert SECRET not in result.model_dump_json()
    trusted = run_case(harness, _case(), config=_with(runtime_config, argv_files=True))
    assert trusted.status == "ok", trusted.error
    assert trusted.trace.answer.endswith(SECRET)  # an installation admin's script is bound


def test_files_every_sandbox_shows_anyway_need_no_bind(
    run_case: RunCase, runtime_config: RuntimeConfig, server_file: Path
) -> None:
    # /bin/sh resolves into /usr; /etc/passwd is in the sandbox's /etc copy; a file under
    # BENCHBOOK_SANDBOX_RO_PATHS is there for every harness.
    config = _with(runtime_config, ro_paths=(server_file.parent,))
    harness = _harness(["sh", "-c", READER, "x", "/bin/sh", "/etc/passwd", str(server_file)])
    result = run_case(harness, _case(), config=config)
    assert result.status == "ok", result.error
    assert result.trace.answer.endswith(SECRET)


def test_a_symlink_into_usr_pointing_elsewhere_is_judged_by_its_target(
    run_case: RunCase, runtime_config: RuntimeConfig, server_file: Path, tmp_path: Path
) -> None:
    link = tmp_path / "ro" / "innocent.txt"
    link.parent.mkdir()
    link.symlink_to(server_file)
    config = _with(runtime_config, ro_paths=(link.parent,))
    result = run_case(_harness(["cat", str(link)]), _case(), config=config)
    assert result.status == "error" and result.error is not None, result.trace.answer
    assert result.error.startswith("sandbox: config.argv[1]:")
    assert SECRET not in result.model_dump_json()


@pytest.mark.parametrize("which", ["database", "wal", "pricing", "secret.key"])
def test_an_installation_admins_argv_never_binds_the_servers_own_files(
    run_case: RunCase, runtime_config: RuntimeConfig, tmp_path: Path, which: str
) -> None:
    home, data = tmp_path / "home", tmp_path / "data"
    home.mkdir()
    data.mkdir()
    files = {
        "database": data / "bench.db",
        "wal": data / "bench.db-wal",
        "pricing": data / "pricing.json",
        "secret.key": home / "secret.key",
    }
    for path in files.values():
        path.write_text(SECRET)
    settings = Settings(
        home=home, database_url=f"sqlite:///{files['database']}", pricing_file=files["pricing"]
    )
    policy = replace(sandbox_policy(settings, runtime_config.work_root), argv_files=True)
    config = replace(runtime_config, sandbox=policy)
    result = run_case(_harness(["cat", str(files[which])]), _case(), config=config)
    assert result.status == "error" and result.error is not None, result.trace.answer
    assert result.error.startswith("sandbox: the sandbox never exposes"), result.error
    assert SECRET not in result.model_dump_json()


def test_the_policy_default_binds_no_argv_file() -> None:
    assert SandboxPolicy().argv_files is False  # fail closed: only a run that checked sets it
