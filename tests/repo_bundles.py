"""Real repositories from ``../shared/data/contextbench/repos`` (single-commit git bundles).

``bundled_repo("pydata__xarray")`` returns ``(checkout, base_commit)``: a local repository
fetched from the bundle into the session's temporary directory, checked out at its only commit.
A plain ``git clone`` of these bundles fails (the commit's parent is deliberately absent), so the
checkout marks the commit as a shallow boundary first, as the bundles' README says.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from benchbook.eval.sync import run_sync
from benchbook.runtime.environments.mirrors import seed_mirror

BundledRepo = Callable[[str], tuple[Path, str]]


def _git(*args: str) -> str:
    done = subprocess.run(["git", *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture(scope="session")
def bundled_repo(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> BundledRepo:
    """A factory ``name → (checkout, sha)`` for ``<owner>__<name>`` bundles, cached per session."""
    root = tmp_path_factory.mktemp("bundled-repos")
    done: dict[str, tuple[Path, str]] = {}

    def checkout(name: str) -> tuple[Path, str]:
        if name not in done:
            (bundle,) = (shared_data / "contextbench" / "repos").glob(f"{name}@*.bundle")
            sha = _git("bundle", "list-heads", str(bundle)).split()[0]
            repo = root / name
            _git("init", "-q", str(repo))
            (repo / ".git" / "shallow").write_text(sha + "\n")
            _git("-C", str(repo), "fetch", "-q", str(bundle), "main")
            _git("-C", str(repo), "-c", "advice.detachedHead=false", "checkout", "-q", sha)
            done[name] = (repo, sha)
        return done[name]

    return checkout


def mirror_from_bundle(bundle: Path, mirrors: Path) -> tuple[Path, str]:
    """``(mirror, sha)``: the bundle ``<owner>__<name>@<sha12>.bundle`` seeded into the mirror
    cache ``mirrors`` by the runtime's own ``seed_mirror`` (``benchbook mirrors add``), so the
    mirror is laid out exactly as checkouts and rescoring read it."""
    owner, name = bundle.name.split("@")[0].split("__")
    sha = _git("bundle", "list-heads", str(bundle)).split()[0]
    stats, _ = run_sync(seed_mirror(mirrors, f"{owner}/{name}", bundle))
    return stats.path, sha
