"""The sandbox (issue 27 item 1): what a case's processes cannot do — a command harness, a
command grader and a repo setup line alike — and what leaves no process behind."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from benchbook.contracts.dataset import Case, GraderSpec, PromptEnv, RepoEnv
from benchbook.contracts.harness import CommandHarness
from benchbook.contracts.run import CaseInput, Trace
from benchbook.eval.graders.command import grade_command
from benchbook.eval.grading import Submission
from benchbook.runtime import RuntimeConfig, open_environment
from benchbook.runtime.sandbox import SandboxLimits, SandboxPolicy
from tests.procscan import processes_with, wait_gone
from tests.runtime.runner import RunCase
from tests.runtime.sandbox_probe import MARKER_VALUE, MARKER_VAR, PROBE, tcp_server

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A BENCHBOOK_HOME with a database file and a secret key, as a server has."""
    path = tmp_path / "home"
    path.mkdir()
    (path / "benchbook.db").write_bytes(b"SQLite format 3\x00 every workspace's gold")
    (path / "secret.key").write_text("the-installation-secret-key")
    return path


@pytest.fixture
def config(runtime_config: RuntimeConfig, home: Path) -> RuntimeConfig:
    """The runtime config with ``home`` denied, as ``runtime_config(settings)`` builds it."""
    return replace(runtime_config, sandbox=SandboxPolicy(denied_paths=(home,)))


def _harness(argv: list[str], **config: Any) -> CommandHarness:
    return CommandHarness.model_validate(
        {"id": "h", "version": "1.0.0", "config": {"argv": argv, **config}}
    )


def _case(**fields: Any) -> CaseInput:
    return CaseInput(case_id="c1", env=PromptEnv(), task="probe", timeout_s=60, **fields)


def _probe_argv(home: Path, port: int, outside: Path, template: bool = False) -> list[str]:
    """The probe's command line (``template``: braces doubled, for a harness's argv)."""
    code = PROBE.replace("{", "{{").replace("}", "}}") if template else PROBE
    return [sys.executable, "-c", code, str(os.getpid()), str(home), str(port), str(outside)]


def _assert_contained(found: dict[str, Any], outside: Path) -> None:
    for attempt in ("database", "secret_key", "server_environ", "connect"):
        assert found[attempt][0] == "refused", (attempt, found[attempt])
    # A write beside the workdir lands in the sandbox's private tmpfs (or fails): never here.
    assert found["write_usr"][0] == "refused"
    assert found["write_workdir"][0] == "ok"  # the workdir is the one writable place
    assert found["marker"] is None
    assert os.getpid() not in found["pids"] and len(found["pids"]) < 8, found["pids"]
    assert not outside.exists()


def test_a_command_harness_cannot_read_home_the_server_env_or_proc_nor_reach_the_network(
    run_case: RunCase,
    config: RuntimeConfig,
    home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(MARKER_VAR, MARKER_VALUE)
    outside = tmp_path / "outside.txt"
    with tcp_server() as port:
        result = run_case(_harness(_probe_argv(home, port, outside, True)), _case(), config=config)
    assert result.status == "ok", (result.error, result.trace.stderr_tail)
    _assert_contained(json.loads(result.trace.answer), outside)


def test_a_network_full_harness_reaches_a_local_server(
    run_case: RunCase, config: RuntimeConfig, home: Path, tmp_path: Path
) -> None:
    with tcp_server() as port:
        harness = _harness(_probe_argv(home, port, tmp_path / "x", True), network="full")
        result = run_case(harness, _case(), config=config)
    assert result.status == "ok", result.error
    found = json.loads(result.trace.answer)
    assert found["connect"][0] == "ok"
    assert found["secret_key"][0] == "refused"  # the network, not the files


def test_a_command_grader_cannot_read_home_the_server_env_or_proc_nor_reach_the_network(
    config: RuntimeConfig, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MARKER_VAR, MARKER_VALUE)
    workdir = tmp_path / "case" / "work"
    workdir.mkdir(parents=True)
    outside = tmp_path / "outside.txt"
    with tcp_server() as port:
        spec = GraderSpec(id="command", config={"argv": _probe_argv(home, port, outside)})
        submission = Submission("", Trace(), workdir=workdir, sandbox=config.sandbox)
        case = Case(id="c1", env={"kind": "prompt"}, task="t")
        score = asyncio.run(grade_command(spec, submission, case))
    assert score.status == "ok", score.detail
    stdout = score.detail["stdout_tail"]
    assert isinstance(stdout, str)
    _assert_contained(json.loads(stdout), outside)


def test_a_repo_setup_line_cannot_read_home_the_server_env_or_proc_nor_reach_the_network(
    config: RuntimeConfig, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MARKER_VAR, MARKER_VALUE)
    outside = tmp_path / "outside.txt"
    with tcp_server() as port:
        args = " ".join(_probe_argv(home, port, outside)[3:])
        setup = [f"{sys.executable} probe.py {args} >&2; exit 1"]
        env = RepoEnv.model_validate({"source": {"files": {"probe.py": PROBE}}, "setup": setup})
        case_input = CaseInput(case_id="r1", env=env, task="t", timeout_s=60)

        async def provision() -> str | None:
            async with open_environment(case_input, config) as workspace:
                return workspace.error

        error = asyncio.run(provision())
    assert error is not None and "setup command failed (exit 1)" in error
    _assert_contained(json.loads(error[error.index("{") :]), outside)


def test_a_path_under_home_is_never_bound_even_when_the_harness_names_it(
    run_case: RunCase, config: RuntimeConfig, home: Path
) -> None:
    # Even a harness an installation admin registered (argv files bound) never gets home.
    config = replace(config, sandbox=replace(config.sandbox, argv_files=True))
    result = run_case(_harness(["cat", str(home / "secret.key")]), _case(), config=config)
    assert result.status == "error"
    assert result.error is not None and result.error.startswith("sandbox: the sandbox never")
    assert "the-installation-secret-key" not in result.model_dump_json()


def test_a_work_root_inside_home_is_usable_while_home_stays_denied(
    run_case: RunCase, runtime_config: RuntimeConfig, home: Path
) -> None:
    work_root = home / "work"
    policy = SandboxPolicy(denied_paths=(home,), allowed_inside=(work_root,), argv_files=True)
    config = replace(runtime_config, work_root=work_root, sandbox=policy)
    ok = run_case(_harness(["sh", "-c", "ls ..; echo done"]), _case(), config=config)
    assert ok.status == "ok" and ok.trace.answer.endswith("done"), ok.error
    refused = run_case(_harness(["cat", str(home / "secret.key")]), _case(), config=config)
    assert refused.error is not None and refused.error.startswith("sandbox: the sandbox never")


def test_a_setsid_child_does_not_outlive_its_case(run_case: RunCase, config: RuntimeConfig) -> None:
    marker = "1000.4242"
    harness = _harness(["sh", "-c", f"setsid -f sleep {marker}; echo started"])
    result = run_case(harness, _case(), config=config)
    assert result.status == "ok" and result.trace.answer == "started"
    assert wait_gone(f"sleep {marker}") == []


RUNNER = """
import asyncio, sys
from pathlib import Path
from benchbook.contracts.dataset import PromptEnv
from benchbook.contracts.harness import CommandHarness
from benchbook.contracts.run import CaseInput
from benchbook.runtime import RuntimeConfig
from tests.runtime.runner import run_case_async
root, script = Path(sys.argv[1]), sys.argv[2]
harness = CommandHarness.model_validate(
    {"id": "h", "version": "1.0.0", "config": {"argv": ["sh", "-c", script]}})
case = CaseInput(case_id="c", env=PromptEnv(), task="t", timeout_s=600)
config = RuntimeConfig(work_root=root / "work", mirrors=root / "mirrors")
asyncio.run(run_case_async(harness, case, config))
"""


def test_nothing_of_a_case_survives_a_kill_9_of_the_process_running_it(tmp_path: Path) -> None:
    detached, waiting = "1000.4343", "1000.4444"
    script = f"setsid -f sleep {detached}; sleep {waiting}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    runner = subprocess.Popen([sys.executable, "-c", RUNNER, str(tmp_path), script], env=env)
    try:
        deadline = time.monotonic() + 60
        while not (processes_with(f"sleep {detached}") and processes_with(f"sleep {waiting}")):
            assert runner.poll() is None and time.monotonic() < deadline, "the case never started"
            time.sleep(0.05)
    finally:
        os.kill(runner.pid, signal.SIGKILL)
        runner.wait()
    assert wait_gone(f"sleep {detached}") == []
    assert wait_gone(f"sleep {waiting}") == []


def test_the_limits_stop_a_big_file_a_cpu_spin_and_a_big_allocation(
    run_case: RunCase, config: RuntimeConfig
) -> None:
    limits = SandboxLimits(cpu_s=1, address_space_bytes=512 << 20, file_size_bytes=1 << 20)
    limited = replace(config, sandbox=replace(config.sandbox, limits=limits))
    write = run_case(
        _harness(["sh", "-c", "head -c 2000000 /dev/zero > big"]), _case(), config=limited
    )
    assert write.status == "error" and write.error is not None, write.error
    started = time.monotonic()
    spin = run_case(_harness(["sh", "-c", "while :; do :; done"]), _case(), config=limited)
    assert spin.status == "error" and spin.error != "timeout"
    assert time.monotonic() - started < 30
    grab = [sys.executable, "-c", "b = bytearray(1 << 30); print('allocated')"]
    allocated = run_case(_harness(grab), _case(), config=limited)
    assert allocated.status == "error" and "MemoryError" in allocated.trace.stderr_tail


def test_a_case_memory_request_lowers_the_address_space_limit(
    run_case: RunCase, config: RuntimeConfig
) -> None:
    grab = _harness([sys.executable, "-c", "b = bytearray(600 << 20); print('allocated')"])
    assert run_case(grab, _case(), config=config).trace.answer == "allocated"
    small = run_case(grab, _case(resources={"memory_mb": 300}), config=config)
    assert small.status == "error" and "MemoryError" in small.trace.stderr_tail


def test_without_bubblewrap_nothing_starts_and_the_error_names_the_requirement(
    run_case: RunCase, config: RuntimeConfig, tmp_path: Path
) -> None:
    missing = replace(config, sandbox=SandboxPolicy(bwrap="/no/such/bwrap"))
    flag = tmp_path / "ran"
    result = run_case(_harness(["sh", "-c", f"touch {flag}"]), _case(), config=missing)
    assert result.status == "error"
    assert result.error is not None
    assert result.error.startswith("sandbox: the sandbox needs bubblewrap at /no/such/bwrap")
    assert "apt-get install bubblewrap" in result.error
    assert not flag.exists()


def test_git_on_the_checkout_runs_a_filter_the_harness_planted_only_inside_the_sandbox(
    run_case: RunCase, config: RuntimeConfig, tmp_path: Path
) -> None:
    planted = tmp_path / "filter-ran-on-the-server"
    script = (
        f"git config filter.evil.clean 'touch {planted}; touch filter-ran-here; cat' && "
        "echo '* filter=evil' > .gitattributes && echo changed > README.md"
    )
    env = RepoEnv.model_validate({"source": {"files": {"README.md": "hello\n"}}})
    case_input = CaseInput(case_id="g1", env=env, task="t", timeout_s=60)
    result = run_case(_harness(["sh", "-c", script]), case_input, config=config)
    assert result.status == "ok", (result.error, result.trace.stderr_tail)
    assert not planted.exists()  # git ran the case's filter, but in the case's sandbox
    assert "changed" in (result.trace.env_snapshot.diff or "")


def test_the_sandbox_etc_holds_nothing_another_local_user_could_not_read(
    run_case: RunCase, config: RuntimeConfig
) -> None:
    script = "ls -a /etc /etc/ssl; test ! -e /etc/shadow && test ! -e /etc/ssl/private && echo ok"
    result = run_case(_harness(["sh", "-c", script]), _case(), config=config)
    assert result.status == "ok", result.trace.stderr_tail
    assert result.trace.answer.endswith("ok") and "resolv.conf" in result.trace.answer


_TMP_WALK = """
import json, os, sys
bound = [os.path.realpath(p) for p in sys.argv[1:]]
seen = []
for top, dirs, files in os.walk("/tmp"):
    seen += [os.path.join(top, n) for n in dirs + files]
    dirs[:] = [d for d in dirs if os.path.join(top, d) not in bound]
print(json.dumps(seen))
"""


def test_the_private_tmp_shows_only_the_directories_leading_to_bound_paths(
    run_case: RunCase, config: RuntimeConfig, tmp_path: Path
) -> None:
    # docs/security.md: the sandbox's /tmp is a fresh tmpfs; a bound path under the host's /tmp
    # (the case directory, Benchbook's Python) appears there with its parent directories — names
    # on the way to it only, nothing else of the host's /tmp.
    host_file = Path("/tmp") / f"bb-sandbox-probe-{os.getpid()}"
    host_file.write_text("host tmp")
    (tmp_path / "sibling.txt").write_text("beside the work root")
    prefixes = [sys.prefix, sys.base_prefix, sys.exec_prefix]
    argv = [sys.executable, "-c", _TMP_WALK, "{workdir}", *prefixes]
    try:
        result = run_case(_harness(argv), _case(), config=config)
    finally:
        host_file.unlink()
    assert result.status == "ok", (result.error, result.trace.stderr_tail)
    seen = json.loads(result.trace.answer)
    bound = [Path(p).resolve() for p in prefixes] + [config.work_root.resolve()]
    for name in seen:
        path = Path(name)
        assert any(path == b or b.is_relative_to(path) or path.is_relative_to(b) for b in bound), (
            name
        )
    assert host_file.as_posix() not in seen
    assert (tmp_path / "sibling.txt").as_posix() not in seen
