"""The ``repo`` environment (SPEC H.3) against a bare repository served over real HTTP."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchbook.contracts.dataset import RepoEnv
from benchbook.contracts.harness import CommandHarness
from benchbook.contracts.run import CaseInput
from benchbook.runtime import RuntimeConfig, open_environment
from benchbook.runtime.environments.repo import audit, mirror_path
from tests.runtime.gitserver import GitServer, git, make_bare_repo, serve_git
from tests.runtime.runner import RunCase

FILES = {"README.md": "# widget\n", "src/calc.py": "def add(a, b):\n    return a - b\n"}


@pytest.fixture
def runtime_config(tmp_path: Path) -> RuntimeConfig:
    """The test git server listens on loopback: the installation lists ``127.0.0.1`` for git
    (``BENCHBOOK_GIT_ALLOWED_HOSTS``; ``test_git_egress.py`` checks the refusal without it)."""
    return RuntimeConfig(
        work_root=tmp_path / "work", mirrors=tmp_path / "mirrors", git_allowed_hosts=("127.0.0.1",)
    )


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[GitServer, str]]:
    bare, commit = make_bare_repo(tmp_path / "remote", FILES)
    with serve_git(bare) as server:
        yield server, commit


def _harness(script: str, **config: Any) -> CommandHarness:
    return CommandHarness.model_validate(
        {"id": "fixer", "version": "1.0.0", "config": {"argv": ["sh", "-c", script], **config}}
    )


def _case(env: Any, case_id: str = "c1") -> CaseInput:
    return CaseInput(case_id=case_id, env=env, task="fix add", timeout_s=60)


def _git_env(server: GitServer, ref: str, setup: list[str] | None = None) -> RepoEnv:
    return RepoEnv.model_validate({"source": {"git": server.url, "ref": ref}, "setup": setup or []})


FIX = "sed -i 's/a - b/a + b/' src/calc.py"


def test_the_trace_diff_is_exactly_the_harness_change_and_the_audit_is_clean(
    run_case: RunCase, served: tuple[GitServer, str]
) -> None:
    server, commit = served
    result = run_case(_harness(FIX), _case(_git_env(server, "main")))
    assert result.status == "ok", result.error
    snap = result.trace.env_snapshot
    assert snap.diff is not None
    assert "--- a/src/calc.py\n+++ b/src/calc.py\n" in snap.diff
    changed = [
        line
        for line in snap.diff.splitlines()
        if line[:1] in "+-" and line[:3] not in ("+++", "---")
    ]
    assert changed == ["-    return a - b", "+    return a + b"]
    assert snap.audit is not None
    assert (snap.audit.ok, snap.audit.head, snap.audit.commit) == (True, commit, commit)
    assert snap.audit.clean is True and snap.audit.untracked == []


def test_new_files_are_in_the_diff_and_the_diff_applies_to_the_ref(
    run_case: RunCase, served: tuple[GitServer, str], tmp_path: Path
) -> None:
    server, commit = served
    result = run_case(
        _harness(FIX + "; printf 'notes\\n' > NOTES.txt"), _case(_git_env(server, commit))
    )
    diff = result.trace.env_snapshot.diff
    assert diff is not None and "+++ b/NOTES.txt" in diff
    check = tmp_path / "check"
    git(tmp_path, "clone", "-q", str(server.bare), str(check))
    subprocess.run(["git", "apply", "-"], cwd=check, input=diff, text=True, check=True)
    assert (check / "NOTES.txt").read_text() == "notes\n"
    assert "a + b" in (check / "src/calc.py").read_text()


def test_junk_in_the_mirror_never_reaches_the_working_copy_and_the_mirror_is_reused(
    run_case: RunCase, served: tuple[GitServer, str], runtime_config: RuntimeConfig
) -> None:
    server, _ = served
    first = run_case(_harness("true"), _case(_git_env(server, "main")))
    assert first.status == "ok", first.error
    mirror = mirror_path(runtime_config.mirrors, server.url)
    assert (mirror / "HEAD").is_file()
    assert mirror.parent.name == "acme" and mirror.parent.parent.name.startswith("127.0.0.1_")
    (mirror / "junk.txt").write_text("junk\n")
    (mirror / "src").mkdir()
    (mirror / "src" / "calc.py").write_text("poisoned\n")
    requests_after_first = len(server.requests)
    listing = "ls -A; cat src/calc.py"
    second = run_case(_harness(listing), _case(_git_env(server, "main"), case_id="c2"))
    assert second.status == "ok", second.error
    assert "junk.txt" not in second.trace.answer
    assert "poisoned" not in second.trace.answer and "return a - b" in second.trace.answer
    assert second.trace.env_snapshot.diff == ""
    assert len(server.requests) == requests_after_first, "the second case must not clone again"


def test_a_ref_missing_from_the_mirror_is_fetched(
    run_case: RunCase, served: tuple[GitServer, str], tmp_path: Path
) -> None:
    server, _ = served
    assert run_case(_harness("true"), _case(_git_env(server, "main"))).status == "ok"
    work = tmp_path / "push"
    git(tmp_path, "clone", "-q", str(server.bare), str(work))
    (work / "CHANGELOG").write_text("v2\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "v2")
    git(work, "tag", "v2")
    git(work, "push", "-q", "origin", "main", "v2")
    git(server.bare, "update-server-info")
    result = run_case(_harness("cat CHANGELOG"), _case(_git_env(server, "v2")))
    assert (result.status, result.trace.answer) == ("ok", "v2")


def test_concurrent_cases_share_one_mirror_without_racing(
    served: tuple[GitServer, str], runtime_config: RuntimeConfig
) -> None:
    server, commit = served
    from tests.runtime.runner import run_case_async

    async def many() -> list[Any]:
        cases = [_case(_git_env(server, "main"), case_id=f"c{i}") for i in range(4)]
        return await asyncio.gather(
            *(run_case_async(_harness(FIX), c, runtime_config) for c in cases)
        )

    results = asyncio.run(many())
    assert [r.status for r in results] == ["ok"] * 4
    assert all(r.trace.env_snapshot.audit.head == commit for r in results)
    assert len({r.trace.env_snapshot.diff for r in results}) == 1


def test_a_files_source_is_committed_so_the_diff_works_the_same(run_case: RunCase) -> None:
    env = RepoEnv.model_validate({"source": {"files": FILES}})
    result = run_case(_harness(FIX + "; rm README.md"), _case(env))
    assert result.status == "ok", result.error
    snap = result.trace.env_snapshot
    assert snap.audit is not None and snap.audit.ok
    assert snap.diff is not None
    assert "+    return a + b" in snap.diff and "deleted file mode" in snap.diff


def test_setup_commands_run_before_and_stay_out_of_the_diff(run_case: RunCase) -> None:
    env = RepoEnv.model_validate({"source": {"files": FILES}, "setup": ["echo built > BUILD"]})
    result = run_case(_harness("cat BUILD; " + FIX), _case(env))
    assert (result.status, result.trace.answer) == ("ok", "built")
    diff = result.trace.env_snapshot.diff or ""
    assert "BUILD" not in diff and "+    return a + b" in diff


def test_a_failing_setup_command_is_an_environment_error_with_its_stderr(
    run_case: RunCase, tmp_path: Path
) -> None:
    marker = tmp_path / "harness-ran"
    env = RepoEnv.model_validate(
        {"source": {"files": FILES}, "setup": ["echo missing dependency >&2; exit 4"]}
    )
    result = run_case(_harness(f"touch {marker}"), _case(env))
    assert result.status == "error"
    assert (
        result.error
        == "setup command failed (exit 4): echo missing dependency >&2; exit 4: missing dependency"
    )
    assert not marker.exists()


def test_an_unreachable_repository_is_an_environment_error(run_case: RunCase) -> None:
    env = RepoEnv.model_validate(
        {"source": {"git": "http://127.0.0.1:9/none/x.git", "ref": "main"}}
    )
    result = run_case(_harness("true"), _case(env))
    assert result.status == "error"
    assert result.error is not None and result.error.startswith(
        "git clone http://127.0.0.1:9/none/x.git failed"
    )


def test_working_copies_are_removed_after_the_case(
    served: tuple[GitServer, str], runtime_config: RuntimeConfig
) -> None:
    server, _ = served

    async def go() -> Path:
        async with open_environment(_case(_git_env(server, "main")), runtime_config) as ws:
            assert ws.error is None and (ws.workdir / "src" / "calc.py").is_file()
            return ws.workdir

    workdir = asyncio.run(go())
    assert not workdir.exists()
    assert list(runtime_config.work_root.iterdir()) == []


def test_a_ref_that_does_not_exist_is_an_environment_error(
    run_case: RunCase, served: tuple[GitServer, str], tmp_path: Path
) -> None:
    server, _ = served
    marker = tmp_path / "harness-ran"
    result = run_case(_harness(f"touch {marker}"), _case(_git_env(server, "no-such-branch")))
    assert result.status == "error"
    assert result.error == f"ref 'no-such-branch' not found in {server.url}"
    assert not marker.exists()


def test_the_audit_reports_a_moved_head_and_untracked_and_ignored_files(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / ".gitignore").write_text("*.log\n")
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one")
    first = git(repo, "rev-parse", "HEAD")
    clean = asyncio.run(audit(repo, first))
    assert (clean.ok, clean.clean, clean.problems) == (True, True, [])
    (repo / "a.txt").write_text("b\n")
    git(repo, "commit", "-q", "-am", "two")
    (repo / "new.txt").write_text("untracked\n")
    (repo / "debug.log").write_text("ignored\n")
    dirty = asyncio.run(audit(repo, first))
    assert dirty.ok is False and dirty.clean is False
    assert dirty.head != first and sorted(dirty.untracked) == ["debug.log", "new.txt"]
    assert dirty.problems[0] == f"HEAD is {dirty.head}, expected {first}"
