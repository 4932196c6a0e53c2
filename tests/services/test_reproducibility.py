"""A run's reproducibility record asks git and the package metadata once per process
(``services/reproducibility.py``): the server's own checkout and installation do not change
while it runs, so a second run reuses the first answers."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from benchbook.services.reproducibility import checkout_revision, code_revision, package_version


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def _commit(repo: Path, message: str) -> str:
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "--allow-empty",
         "-m", message)  # fmt: skip
    return _git(repo, "rev-parse", "HEAD")


def test_the_checkout_revision_is_asked_of_git_once_per_root(tmp_path: Path) -> None:
    repo = tmp_path / "checkout"
    repo.mkdir()
    _git(repo, "init", "-q")
    first = _commit(repo, "one")
    assert checkout_revision(repo) == first
    later = _commit(repo, "two")  # HEAD moves: only a fresh `git rev-parse` would see it
    assert later != first
    assert checkout_revision(repo) == first
    other = tmp_path / "other"
    other.mkdir()
    _git(other, "init", "-q")
    assert checkout_revision(other) is None  # no commit yet: a root of its own, asked anew


def test_the_servers_own_revision_is_its_checkouts_head() -> None:
    root = Path(__file__).resolve().parents[2]
    assert code_revision() == checkout_revision(root)


def test_a_package_version_is_read_once_per_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = tmp_path / "bb_cache_probe-1.0.dist-info"
    info.mkdir()
    metadata = info / "METADATA"
    metadata.write_text("Metadata-Version: 2.1\nName: bb-cache-probe\nVersion: 1.0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert package_version("bb-cache-probe") == "1.0"
    metadata.write_text("Metadata-Version: 2.1\nName: bb-cache-probe\nVersion: 2.0\n")
    assert package_version("bb-cache-probe") == "1.0"
    assert package_version("bb-not-installed-probe") is None
