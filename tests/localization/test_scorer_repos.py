"""Issue 29: what ``localization export`` hands the upstream scorer as ``repo_url`` is checked
out by the scorer's own commands, for real, bounded by a timeout and a process-count guard.

Upstream's ``contextbench.core.repo.checkout`` (``EuniAI/ContextBench``): a local directory
with ``.git`` is the base repository as is; anything else is cloned with
``git clone --filter=blob:none --no-checkout --progress``; then ``git fetch --depth 1
--filter=blob:none origin COMMIT``, ``git worktree prune``, ``git worktree add --detach``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from benchbook.services import localization
from tests.localization.conftest import ContextBenchRun

MAX_PROCESSES = 40
TIMEOUT_S = 120.0


def _session_size(sid: int) -> int:
    count = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        count += int(fields[3]) == sid  # field 6 of /proc/PID/stat: the session id
    return count


def guarded(argv: list[str], cwd: Path | None = None) -> tuple[str, int]:
    """Run ``argv`` in its own session: ``("exit <status>", peak processes)``, or
    ``("runaway", …)`` when the session exceeds :data:`MAX_PROCESSES` (then killed), or
    ``("timeout", …)``."""
    proc = subprocess.Popen(
        argv, cwd=cwd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline, peak = time.monotonic() + TIMEOUT_S, 0
    while proc.poll() is None:
        peak = max(peak, _session_size(proc.pid))
        if peak > MAX_PROCESSES or time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return ("runaway" if peak > MAX_PROCESSES else "timeout"), peak
        time.sleep(0.02)
    return f"exit {proc.returncode}", peak


def upstream_checkout(repo_url: str, commit: str, cache: Path, tmp_root: Path) -> Path:
    """Upstream's checkout sequence, command for command (module docstring)."""
    if os.path.isdir(repo_url) and os.path.isdir(os.path.join(repo_url, ".git")):
        base = Path(repo_url)
    else:
        base = cache / "base"
        outcome = guarded(
            [
                "git",
                "clone",
                "--filter=blob:none",
                "--no-checkout",
                "--progress",
                repo_url,
                str(base),
            ]
        )
        assert outcome[0] == "exit 0", f"the scorer's clone of {repo_url}: {outcome}"
    fetch = ["git", "fetch", "--depth", "1", "--filter=blob:none", "origin", commit]
    assert guarded(fetch, cwd=base)[0] != "runaway"  # upstream ignores its exit status
    assert guarded(["git", "worktree", "prune"], cwd=base)[0] == "exit 0"
    worktree = tmp_root / "contextbench_worktrees" / commit
    outcome = guarded(["git", "worktree", "add", "--detach", str(worktree), commit], cwd=base)
    assert outcome[0] == "exit 0", outcome
    return worktree


def test_the_scorer_checks_out_every_exported_repository_with_its_own_commands(
    cb_run: ContextBenchRun, tmp_path: Path
) -> None:
    export = localization.export_localization_run(cb_run.ctx, cb_run.run_id)
    assert export.warnings == [] and len(export.gold) == 2
    for n, row in enumerate(export.gold):
        repo_url = str(row["repo_url"])
        assert (Path(repo_url) / ".git").is_dir()  # upstream's path 1: used in place
        assert not repo_url.startswith(str(cb_run.mirrors))  # never the shallow mirror
        worktree = upstream_checkout(repo_url, str(row["commit"]), tmp_path / f"c{n}", tmp_path)
        head = subprocess.run(
            ["git", "-C", str(worktree), "rev-parse", "HEAD"], capture_output=True, text=True
        )
        assert head.stdout.strip() == row["commit"]
        assert any(worktree.iterdir())


def test_the_scorers_clone_command_runs_away_on_a_shallow_bare_mirror(
    cb_run: ContextBenchRun, tmp_path: Path
) -> None:
    # Why the export never hands over the mirror itself (the former repo_url).
    (mirror,) = (cb_run.mirrors / "github.com" / "jqlang").glob("*.git")
    argv = ["git", "clone", "--filter=blob:none", "--no-checkout", "--progress"]
    outcome, peak = guarded([*argv, str(mirror), str(tmp_path / "base")])
    assert outcome == "runaway", (outcome, peak)


def test_the_scorers_exact_clone_command_handles_a_scorer_repository_of_a_full_mirror(
    tmp_path: Path,
) -> None:
    # A mirror with its whole history (seeded from a full repository, or cloned from GitHub):
    # upstream would use the scorer repository in place, and even its clone command handles it.
    import asyncio

    from benchbook.eval.scorer_repos import scorer_repository
    from benchbook.runtime.environments.mirrors import seed_mirror
    from tests.runtime.gitserver import git, make_bare_repo

    bare, first = make_bare_repo(tmp_path / "src", {"a.py": "def f():\n    return 1\n"})
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(bare), str(work))
    (work / "a.py").write_text("def f():\n    return 2\n")
    git(work, "commit", "-qam", "second")
    mirrors = tmp_path / "mirrors"
    stats, _ = asyncio.run(seed_mirror(mirrors, "acme/widget", work))
    exported = scorer_repository(stats.path, mirrors, tmp_path / "scorer-repos")
    base = tmp_path / "cache" / "base"
    argv = ["git", "clone", "--filter=blob:none", "--no-checkout", "--progress"]
    assert guarded([*argv, str(exported), str(base)])[0] == "exit 0"
    worktree = tmp_path / "wt"
    assert guarded(["git", "worktree", "add", "--detach", str(worktree), first], cwd=base)[0] == (
        "exit 0"
    )
    assert (worktree / "a.py").read_text() == "def f():\n    return 1\n"
