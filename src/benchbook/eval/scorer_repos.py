"""Repositories handed to the upstream ContextBench scorer as ``repo_url`` (issue 29).

Upstream's ``contextbench.core.repo.checkout(repo_url, commit, cache_dir)`` (``EuniAI/
ContextBench``) does one of two things:

1. ``repo_url`` is a local directory with a ``.git`` subdirectory → it is used as the base
   repository **as is** (no clone);
2. otherwise → ``git clone --filter=blob:none --no-checkout --progress REPO_URL BASE``.

Then, in the base repository: ``git fetch --depth 1 --filter=blob:none origin COMMIT``,
``git worktree prune`` and ``git worktree add --detach WORKTREE COMMIT``.

Benchbook's mirrors are bare, and the ones seeded from single-commit bundles are **shallow**.
Step 2 against a shallow repository never ends: the serving side packs with
``--shallow-file ''``, finds the parent commit missing, the partial-clone client lazily fetches
the wanted commit again, and so on (4,048 processes in 12 s on this machine; reproduced with
git 2.39 in ``tests/localization/test_scorer_repos.py``). No setting of the served repository
avoids it, so the export never lets upstream clone: :func:`scorer_repository` keeps, per
mirror, a plain (non-bare) repository without a checkout under
``BENCHBOOK_HOME/contextbench/repos/<host>/<owner>/<name>``, cloned from the mirror without a
filter and refreshed with every ref of the mirror. Upstream takes path 1; its ``fetch
--filter`` there only warns (the repository is no partial clone) and ``worktree add`` finds the
commit. The scorer adds its worktrees to that repository, never to the mirror.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

TIMEOUT_S = 600
_ALL_REFS = "+refs/*:refs/remotes/mirror/*"


class ScorerRepoError(Exception):
    """The scorer repository could not be made; the message names the mirror and git's error."""


def _git(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
        env={"PATH": "/usr/local/bin:/usr/bin:/bin", "GIT_TERMINAL_PROMPT": "0", "HOME": "/"},
    )


def scorer_repository(mirror: Path, mirrors: Path, root: Path) -> Path:
    """The repository to give the scorer for ``mirror`` (module docstring), created or
    refreshed now.

    Args:
        mirror: ``<mirrors>/<host>/<owner>/<name>.git``.
        mirrors: the mirror cache root.
        root: where scorer repositories live (``BENCHBOOK_HOME/contextbench/repos``).

    Returns:
        ``root/<host>/<owner>/<name>``: a non-bare repository (``.git`` inside), no checkout.

    Raises:
        ScorerRepoError: the clone or fetch from the mirror failed.
    """
    relative = mirror.relative_to(mirrors)
    target = root / relative.parent / relative.name.removesuffix(".git")
    if not (target / ".git").is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".clone-", dir=target.parent))
        done = _git(["clone", "--quiet", "--no-checkout", str(mirror), str(staging / "repo")])
        if done.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            raise ScorerRepoError(f"git clone {mirror} failed: {done.stderr.strip()[-400:]}")
        (staging / "repo").rename(target)
        staging.rmdir()
    done = _git(["fetch", "--quiet", "origin", _ALL_REFS], cwd=target)
    if done.returncode != 0:
        raise ScorerRepoError(f"git fetch {mirror} failed: {done.stderr.strip()[-400:]}")
    return target


def has_commit(repository: Path, commit: str) -> bool:
    """Whether ``commit`` is a commit of ``repository``."""
    return _git(["cat-file", "-e", f"{commit}^{{commit}}"], cwd=repository).returncode == 0
