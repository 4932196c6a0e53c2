"""Seeding the mirror cache from bundles and local repositories, without network (issue 12
item 4), on the real single-commit bundles of ``../shared/data/contextbench/repos``."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from benchbook.runtime.environments.mirrors import (
    MirrorError,
    list_mirrors,
    repo_url,
    seed_mirror,
)
from benchbook.runtime.environments.repo import audit, checkout, ensure_commit
from tests.repo_bundles import BundledRepo
from tests.runtime.gitserver import git, make_bare_repo

TRACING_SHA = "4609f22aff1ad88b81e749e2536761d6ee364d1f"


def _bundle(shared_data: Path, name: str = "tokio-rs__tracing") -> Path:
    (bundle,) = (shared_data / "contextbench" / "repos").glob(f"{name}@*.bundle")
    return bundle


def _checkout(mirror: Path, url: str, ref: str, workdir: Path) -> tuple[str, bool]:
    async def go() -> tuple[str, bool]:
        commit = await ensure_commit(mirror, url, ref)
        workdir.mkdir()
        await checkout(mirror, commit, workdir)
        return commit, (await audit(workdir, commit)).ok

    return asyncio.run(go())


def _entries(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.git*") if p.suffix != ".lock")


def test_a_single_commit_bundle_seeds_a_shallow_mirror_a_checkout_audits_clean(
    shared_data: Path, tmp_path: Path
) -> None:
    mirrors = tmp_path / "mirrors"
    stats, created = asyncio.run(seed_mirror(mirrors, "tokio-rs/tracing", _bundle(shared_data)))
    assert created is True
    assert stats.path == mirrors / "github.com" / "tokio-rs" / "tracing.git"
    assert (stats.repo, stats.host, stats.url) == (
        "tokio-rs/tracing",
        "github.com",
        "https://github.com/tokio-rs/tracing.git",
    )
    assert (stats.commits, stats.refs, stats.shallow) == (1, 1, True)
    assert stats.size_bytes > 400_000
    commit, clean = _checkout(stats.path, stats.url, TRACING_SHA, tmp_path / "work")
    assert (commit, clean) == (TRACING_SHA, True)
    assert (tmp_path / "work" / "tracing-attributes" / "src" / "lib.rs").is_file()


def test_seeding_again_from_the_same_bundle_changes_nothing(
    shared_data: Path, tmp_path: Path
) -> None:
    mirrors = tmp_path / "mirrors"
    first, _ = asyncio.run(seed_mirror(mirrors, "tokio-rs/tracing", _bundle(shared_data)))
    again, created = asyncio.run(seed_mirror(mirrors, "tokio-rs/tracing", _bundle(shared_data)))
    assert created is False
    assert (again.commits, again.refs, again.shallow) == (first.commits, first.refs, True)
    assert [m.repo for m in asyncio.run(list_mirrors(mirrors))] == ["tokio-rs/tracing"]


def test_a_detached_shallow_checkout_seeds_a_mirror_under_its_own_head_ref(
    bundled_repo: BundledRepo, tmp_path: Path
) -> None:
    repo, sha = bundled_repo("cli__cli")
    mirrors = tmp_path / "mirrors"
    stats, _ = asyncio.run(seed_mirror(mirrors, "cli/cli", repo))
    assert (stats.commits, stats.shallow) == (1, True)
    assert git(stats.path, "for-each-ref", "--format=%(refname)") == f"refs/benchbook/head-{sha}"
    assert _checkout(stats.path, stats.url, sha, tmp_path / "work") == (sha, True)


def test_adding_a_newer_repository_state_fetches_into_the_existing_mirror(
    tmp_path: Path,
) -> None:
    bare, first = make_bare_repo(tmp_path / "remote", {"a.txt": "one\n"})
    mirrors = tmp_path / "mirrors"
    asyncio.run(seed_mirror(mirrors, "acme/widget", bare, host="git.example.org:8443"))
    source = tmp_path / "remote" / "source"
    (source / "a.txt").write_text("two\n")
    git(source, "commit", "-qam", "second")
    stats, created = asyncio.run(
        seed_mirror(mirrors, "acme/widget", source, host="git.example.org:8443")
    )
    second = git(source, "rev-parse", "HEAD")
    assert created is False and second != first
    assert stats.path == mirrors / "git.example.org_8443" / "acme" / "widget.git"
    assert (stats.host, stats.commits, stats.shallow) == ("git.example.org:8443", 2, False)
    assert git(stats.path, "rev-parse", "refs/heads/main") == second
    assert git(stats.path, "symbolic-ref", "HEAD") == "refs/heads/main"


@pytest.mark.parametrize(
    "repo", ["tracing", "a/b/c", "../etc", "owner/..", "-x/y", "a/.hidden", "a/b c", ""]
)
def test_a_name_that_is_not_owner_slash_name_is_refused(repo: str) -> None:
    with pytest.raises(MirrorError, match="is not owner/name"):
        repo_url(repo)


@pytest.mark.parametrize("host", ["github.com/x", "..", "a..b", "http://github.com", ""])
def test_a_bad_host_is_refused(host: str) -> None:
    with pytest.raises(MirrorError, match="is not a host name"):
        repo_url("a/b", host)


def test_bad_sources_are_refused_and_leave_no_mirror(shared_data: Path, tmp_path: Path) -> None:
    mirrors = tmp_path / "mirrors"
    inside = tmp_path / "outer"
    inside.mkdir()
    git(inside, "init", "-q")
    (inside / "sub").mkdir()
    truncated = tmp_path / "truncated.bundle"
    truncated.write_bytes(_bundle(shared_data).read_bytes()[:20_000])
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    cases = [
        (tmp_path / "missing", "does not exist"),
        (text, "is not a git bundle"),
        (inside / "sub", "is not a git repository with a commit"),  # not the outer repo
        (inside, "is not a git repository with a commit"),  # no commit yet
        (truncated, "seeding a/b from"),
    ]
    for source, says in cases:
        with pytest.raises(MirrorError, match=says):
            asyncio.run(seed_mirror(mirrors, "a/b", source))
    assert mirrors.is_dir() and _entries(mirrors) == []  # the truncated bundle got that far
    assert asyncio.run(list_mirrors(mirrors)) == []


def test_github_names_are_case_insensitive_one_mirror_serves_both_spellings(
    shared_data: Path, tmp_path: Path
) -> None:
    from benchbook.runtime.environments.repo import mirror_path

    mirrors = tmp_path / "mirrors"
    bundle = _bundle(shared_data, "fasterxml__jackson-core")
    stats, created = asyncio.run(seed_mirror(mirrors, "fasterxml/jackson-core", bundle))
    assert created is True
    upper = "https://github.com/FasterXML/jackson-core.git"
    assert mirror_path(mirrors, upper) == stats.path  # no second clone, no network
    again, created = asyncio.run(seed_mirror(mirrors, "FasterXML/jackson-core", bundle))
    assert (created, again.path) == (False, stats.path)
    other_host = mirror_path(mirrors, "https://git.example.org/FasterXML/jackson-core.git")
    assert other_host == mirrors / "git.example.org" / "FasterXML" / "jackson-core.git"
