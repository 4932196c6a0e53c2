"""Seeding and listing the mirror cache (SPEC H.3, issue 12 item 4) without network.

A mirror is the bare repository ``<mirrors>/<host>/<owner>/<name>.git`` that ``repo``
environments check out from (:mod:`.repo`). Seeding one from a local source lets a machine
without network run repository benchmarks:

- a **git bundle** (``git bundle create``), including single-commit bundles whose commit names
  a parent they leave out (a plain ``git clone`` refuses those): the bundle is unpacked with
  ``git bundle unbundle``, every commit whose parents are absent becomes a shallow boundary
  (``shallow``), the objects reachable from the bundle's refs are checked, then its refs are
  written in one ``update-ref`` transaction;
- a **local repository** (a working tree or a bare one; shallow ones too): ``git fetch`` of its
  branches and tags, plus its HEAD under ``refs/benchbook/head-<sha>`` when it is detached.

A new mirror is built beside its final path and renamed into place, so a failure leaves
nothing; seeding an existing mirror fetches into it (refs are only written once the objects are
complete) and seeding the same source again changes nothing. The mirror's ``origin`` is the
repository's https URL, so a later ``git fetch`` (when a ref is missing and network exists)
works as for a cloned mirror.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from benchbook.runtime.environments.gitcmd import GitError, git, mirror_lock
from benchbook.runtime.environments.repo import _async_lock, mirror_path

_PART = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
_HOST = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::[0-9]{1,5})?$")


class MirrorError(Exception):
    """A mirror cannot be seeded or read; the message says why (names the input)."""


@dataclass(frozen=True)
class MirrorStats:
    """One mirror as listed.

    Attributes:
        repo: ``owner/name``; ``host`` the git host (``github.com``; ``host_port`` on disk).
        url: the https URL cases name (``https://<host>/<owner>/<name>.git``).
        path: the bare repository on disk.
        commits: commits reachable from its refs (shallow history counts what is there).
        refs: number of refs; ``shallow`` whether some commit's parents are absent.
        size_bytes: bytes of every file of the mirror.
        updated_at: newest modification time of its files (UTC).
    """

    repo: str
    host: str
    url: str
    path: Path
    commits: int
    refs: int
    shallow: bool
    size_bytes: int
    updated_at: datetime


def has_commit(mirror: Path, commit: str) -> bool:
    """Whether the commit ``commit`` (a sha or ref) is in ``mirror``: a shallow mirror seeded
    from a bundle may lack an older case's base commit."""
    done = subprocess.run(
        ["git", "-C", str(mirror), "cat-file", "-e", f"{commit}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    return done.returncode == 0


def repo_url(repo: str, host: str = "github.com") -> str:
    """``https://<host>/<owner>/<name>.git`` for ``owner/name`` (a trailing ``.git`` allowed).

    Raises:
        MirrorError: ``repo`` is not exactly two parts of ``[A-Za-z0-9_.-]`` (not starting with
            ``.`` or ``-``, so no ``..``), or ``host`` is not a host name with an optional port.
    """
    parts = repo.removesuffix(".git").split("/")
    if len(parts) != 2 or not all(_PART.match(p) for p in parts):
        raise MirrorError(
            f"repository {repo!r} is not owner/name (letters, digits, '_', '.', '-'; "
            "neither part may start with '.' or '-')"
        )
    if not _HOST.match(host) or ".." in host:
        raise MirrorError(f"host {host!r} is not a host name (optionally with :port)")
    return f"https://{host}/{parts[0]}/{parts[1]}.git"


async def source_kind(source: Path) -> str:
    """``"bundle"`` or ``"repository"`` for a local seeding source.

    Raises:
        MirrorError: the path does not exist, is a file but no git bundle, or is a directory
            that is not itself a git repository with a commit (a folder inside another
            repository does not count).
    """
    if not source.exists():
        raise MirrorError(f"{source} does not exist")
    if source.is_file():
        try:
            await git(["bundle", "list-heads", str(source)], source.parent)
        except GitError as exc:
            raise MirrorError(f"{source} is not a git bundle ({exc})") from exc
        return "bundle"
    # The ceiling keeps git from finding a repository above the directory.
    ceiling = {"GIT_CEILING_DIRECTORIES": str(source.parent)}
    try:
        await git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], source, env=ceiling)
    except GitError as exc:
        raise MirrorError(f"{source} is not a git repository with a commit") from exc
    return "repository"


async def seed_mirror(
    mirrors: Path, repo: str, source: Path, host: str = "github.com"
) -> tuple[MirrorStats, bool]:
    """Create or update the mirror of ``repo`` on ``host`` from a bundle or local repository.

    Args:
        mirrors: the mirror cache root (``RuntimeConfig.mirrors``).
        repo: ``owner/name``.
        source: a git bundle file or a local repository directory.
        host: the git host the cases' URLs name.

    Returns:
        ``(stats, created)``: the mirror after seeding, and whether it was new.

    Raises:
        MirrorError: bad name, host or source, or a git step failed; a new mirror leaves
            nothing behind, an existing one keeps its refs.
    """
    url = repo_url(repo, host)
    mirror = mirror_path(mirrors, url)
    source = source.resolve()
    kind = await source_kind(source)
    async with _async_lock(mirror), mirror_lock(mirror):
        created = not (mirror / "HEAD").is_file()
        target = mirror.with_name(mirror.name + ".partial") if created else mirror
        try:
            if created:
                shutil.rmtree(target, ignore_errors=True)
                await _init_mirror(target, url)
            if kind == "bundle":
                await _unbundle(target, source)
            else:
                await _fetch_repository(target, source)
            if created:
                await _point_head(target)
        except GitError as exc:
            if created:
                shutil.rmtree(target, ignore_errors=True)
            raise MirrorError(f"seeding {repo} from {source} failed: {exc}") from exc
        if created:
            target.rename(mirror)
    return await mirror_stats(mirrors, mirror), created


async def _init_mirror(target: Path, url: str) -> None:
    target.mkdir(parents=True)
    await git(["init", "--quiet", "--bare", str(target)], target)
    for key, value in (
        ("remote.origin.url", url),
        ("remote.origin.fetch", "+refs/*:refs/*"),
        ("remote.origin.mirror", "true"),
        ("uploadpack.allowAnySHA1InWant", "true"),  # working copies fetch commits by SHA
    ):
        await git(["config", key, value], target)


async def _unbundle(mirror: Path, bundle: Path) -> None:
    heads = await git(["bundle", "unbundle", str(bundle)], mirror)
    refs = [line.split(" ", 1) for line in heads.splitlines() if " " in line]
    old_shallow = _read_shallow(mirror)
    await _write_shallow(mirror, await _commits_missing_parents(mirror))
    shas = sorted({sha for sha, _ in refs})
    try:  # every object the refs need is present (the shallow boundary stops the walk)
        await git(["rev-list", "--objects", "--quiet", *shas], mirror)
    except GitError:
        await _write_shallow(mirror, old_shallow)
        raise
    updates = "".join(f"update {name} {sha}\n" for sha, name in refs if name.startswith("refs/"))
    if updates:
        await git(["update-ref", "--stdin"], mirror, stdin=updates.encode())


async def _commits_missing_parents(mirror: Path) -> set[str]:
    listing = await git(
        ["cat-file", "--batch-all-objects", "--batch-check=%(objecttype) %(objectname)"], mirror
    )
    commits = [line.split()[1] for line in listing.splitlines() if line.startswith("commit ")]
    if not commits:
        return set()
    log = await git(
        ["log", "--no-walk=unsorted", "--stdin", "--format=%H %P"],
        mirror,
        stdin="".join(f"{c}\n" for c in commits).encode(),
        env={"GIT_SHALLOW_FILE": os.devnull},  # the parents as written, not as grafted
    )
    parents = {line.split()[0]: line.split()[1:] for line in log.splitlines() if line}
    wanted = sorted({p for ps in parents.values() for p in ps})
    check = await git(
        ["cat-file", "--batch-check=%(objectname)"],
        mirror,
        stdin="".join(f"{p}\n" for p in wanted).encode(),
    )
    missing = {line.split()[0] for line in check.splitlines() if line.endswith(" missing")}
    return {c for c, ps in parents.items() if any(p in missing for p in ps)}


def _read_shallow(mirror: Path) -> set[str]:
    path = mirror / "shallow"
    return set(path.read_text().split()) if path.is_file() else set()


async def _write_shallow(mirror: Path, commits: set[str]) -> None:
    path = mirror / "shallow"
    if not commits:
        path.unlink(missing_ok=True)
        return
    partial = path.with_name("shallow.partial")
    partial.write_text("".join(f"{c}\n" for c in sorted(commits)))
    partial.replace(path)


async def _fetch_repository(mirror: Path, source: Path) -> None:
    refspecs = ["+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"]
    ceiling = {"GIT_CEILING_DIRECTORIES": str(source.parent)}
    try:
        await git(["symbolic-ref", "--quiet", "HEAD"], source, env=ceiling)
    except GitError:  # a detached HEAD: keep its commit reachable under a name of its own
        head = (await git(["rev-parse", "HEAD"], source, env=ceiling)).strip()
        refspecs.append(f"+{head}:refs/benchbook/head-{head}")
    await git(["fetch", "--quiet", "--update-shallow", "--no-tags", str(source), *refspecs], mirror)


async def _point_head(mirror: Path) -> None:
    """A new mirror's HEAD names ``main`` or ``master`` when it has one of them."""
    for branch in ("main", "master"):
        try:
            await git(["rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"], mirror)
        except GitError:
            continue
        await git(["symbolic-ref", "HEAD", f"refs/heads/{branch}"], mirror)
        return


async def mirror_stats(mirrors: Path, mirror: Path) -> MirrorStats:
    """The :class:`MirrorStats` of the bare repository ``mirror`` under ``mirrors``.

    Raises:
        MirrorError: ``mirror`` is not a readable repository.
    """
    rel = mirror.relative_to(mirrors).parts
    host_dir, owner, name = rel[0], rel[-2], rel[-1].removesuffix(".git")
    host = re.sub(r"_(\d+)$", r":\1", host_dir)
    try:
        refs = (await git(["for-each-ref", "--format=%(objectname)"], mirror)).split()
        commits = int((await git(["rev-list", "--count", "--all"], mirror)).strip() or 0)
    except GitError as exc:
        raise MirrorError(f"{mirror} is not a readable mirror: {exc}") from exc
    size = 0
    newest = 0.0
    for root, _, files in os.walk(mirror):
        for f in files:
            st = Path(root, f).stat()
            size += st.st_size
            newest = max(newest, st.st_mtime)
    return MirrorStats(
        repo=f"{owner}/{name}",
        host=host,
        url=f"https://{host}/{owner}/{name}.git",
        path=mirror,
        commits=commits,
        refs=len(refs),
        shallow=(mirror / "shallow").is_file(),
        size_bytes=size,
        updated_at=datetime.fromtimestamp(newest, UTC),
    )


async def list_mirrors(mirrors: Path) -> list[MirrorStats]:
    """Every mirror ``<mirrors>/<host>/<owner>/<name>.git`` (with a ``HEAD``), sorted by host
    and repository; half-built ``.partial`` directories are not mirrors."""
    if not mirrors.is_dir():
        return []
    found = sorted(p for p in mirrors.glob("*/*/*.git") if (p / "HEAD").is_file())
    return [await mirror_stats(mirrors, p) for p in found]
