"""The ``repo`` environment (SPEC H.3): a private, audited working copy per case.

Sources:

- ``{git, ref}`` (an http(s) URL whose host passes :mod:`.git_egress` before any clone or
  fetch): through the mirror cache ``<mirrors>/<host>/<owner>/<repo>.git`` (``git clone
  --mirror`` on demand, ``git fetch`` when the ref is missing, one lock per mirror — an asyncio
  lock per path and an ``fcntl`` file lock across processes). The working copy receives only the
  objects of the resolved commit's history (``git fetch <mirror> <sha>``), so nothing else
  lying in the mirror directory can reach it.
- ``{files}``: written, then committed with a fixed identity and date (same files, same commit).
- ``{path}`` (a repository inside the case image): needs an ``image`` provider; with one
  configured, a local repository at ``path`` is copied like a mirror at its HEAD.

Before the harness: the audit (HEAD equals the commit; ``git status --porcelain --ignored``
empty), then the ``setup`` commands. After it: ``git diff --binary`` from the post-setup tree to
the working tree (new files included, through a temporary index), so the diff is exactly what
the harness changed.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import weakref
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

from benchbook.contracts.dataset import FilesSource, GitSource, RepoEnv
from benchbook.contracts.git_urls import git_url_problem
from benchbook.contracts.run import CaseInput, EnvAudit, EnvSnapshot
from benchbook.runtime.config import RuntimeConfig
from benchbook.runtime.environments.git_egress import (
    GIT_PROTOCOLS,
    GitEgressError,
    git_network_config,
)
from benchbook.runtime.environments.gitcmd import GitError, git, mirror_lock, tail
from benchbook.runtime.environments.workspace import Workspace
from benchbook.runtime.sandbox import SandboxError, SandboxPolicy, run_sandboxed

_SETUP_TAIL_CHARS = 2000
#: A network clone or fetch speaks http(s) only (no ``file``, ``ext``, ``ssh`` remote).
_NETWORK_ENV = {"GIT_ALLOW_PROTOCOL": GIT_PROTOCOLS}


class RepoError(Exception):
    """The environment cannot be provided; the message becomes ``Workspace.error``."""


def mirror_path(mirrors: Path, url: str) -> Path:
    """``<mirrors>/<host>/<owner>/<repo>.git`` for an http(s) git URL; on GitHub an existing
    mirror of another spelling of ``owner/repo`` is that repository's mirror.

    Raises:
        RepoError: the URL is not one :func:`~benchbook.contracts.git_urls.git_url_problem`
            accepts (a host or path step of ``..``, ``.`` or nothing), or the path would leave
            ``mirrors`` anyway.
    """
    problem = git_url_problem(url)
    if problem is not None:
        raise RepoError(f"cannot mirror {url[:200]!r}: {problem}")
    parts = urlsplit(url)
    steps = [s for s in parts.path.split("/") if s]
    host = (parts.hostname or "").strip("[]") + (f"_{parts.port}" if parts.port else "")
    name = steps[-1].removesuffix(".git") + ".git"
    path = mirrors.joinpath(host, *steps[:-1], name)
    if not path.resolve().is_relative_to(mirrors.resolve()):  # belt and braces
        raise RepoError(f"cannot mirror {url[:200]!r}: it leaves the mirror cache")
    if host in CASE_INSENSITIVE_HOSTS and not path.exists():
        return _existing_spelling(mirrors / host, [*steps[:-1], name]) or path
    return path


CASE_INSENSITIVE_HOSTS = frozenset({"github.com"})
"""Hosts whose ``owner/name`` are case-insensitive: ``FasterXML/jackson-core`` and
``fasterxml/jackson-core`` are one repository, so they share one mirror."""


def _existing_spelling(root: Path, steps: list[str]) -> Path | None:
    """The existing path under ``root`` whose steps equal ``steps`` case-insensitively."""
    current = root
    for step in steps:
        if not current.is_dir():
            return None
        match = next((c for c in current.iterdir() if c.name.lower() == step.lower()), None)
        if match is None:
            return None
        current = match
    return current


# asyncio locks belong to one event loop, so they are kept per loop (tests run several loops).
_LOCKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[Path, asyncio.Lock]]
_LOCKS = weakref.WeakKeyDictionary()


def _async_lock(path: Path) -> asyncio.Lock:
    locks = _LOCKS.setdefault(asyncio.get_running_loop(), {})
    return locks.setdefault(path, asyncio.Lock())


async def _network(url: str, allowed: tuple[str, ...]) -> list[str]:
    """The ``-c`` options of a clone or fetch of ``url`` (:mod:`.git_egress`).

    Raises:
        RepoError: the host is not one the server's git may reach; nothing was fetched.
    """
    try:
        return await git_network_config(url, allowed)
    except GitEgressError as exc:
        raise RepoError(f"{url[:200]}: {exc}") from None


async def ensure_commit(mirror: Path, url: str, ref: str, allowed: tuple[str, ...] = ()) -> str:
    """Clone or fetch the mirror of ``url`` as needed; the full SHA ``ref`` resolves to. A
    mirror that has ``ref`` is read without network; a clone or fetch first passes the egress
    rules of :mod:`.git_egress` (``allowed``: the installation's non-public git hosts).

    Raises:
        RepoError: the host is refused, the clone or fetch failed, or ``ref`` names no commit
            even after a fetch.
    """
    async with _async_lock(mirror), mirror_lock(mirror):
        if not (mirror / "HEAD").is_file():
            await _clone_mirror(mirror, url, await _network(url, allowed))
        commit = await _resolve(mirror, ref)
        if commit is None:
            try:
                origin = (await git(["config", "remote.origin.url"], mirror)).strip()
            except GitError as exc:
                raise RepoError(f"ref {ref!r} not in the mirror of {url}: {exc}") from exc
            options = await _network(origin, allowed)
            try:
                await git(
                    ["fetch", "--prune", "--tags", "origin"], mirror, env=_NETWORK_ENV,
                    config=options,
                )  # fmt: skip
            except GitError as exc:
                raise RepoError(f"git fetch {url} failed: {exc}") from exc
            commit = await _resolve(mirror, ref)
        if commit is None:
            raise RepoError(f"ref {ref!r} not found in {url}")
        return commit


async def _clone_mirror(mirror: Path, url: str, options: list[str]) -> None:
    # Clone beside the final path and rename, so a killed clone never leaves a half mirror.
    mirror.parent.mkdir(parents=True, exist_ok=True)
    partial = mirror.with_name(mirror.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        await git(
            ["clone", "--mirror", "--quiet", url, str(partial)], mirror.parent,
            env=_NETWORK_ENV, config=options,
        )  # fmt: skip
        # Working copies fetch single commits by SHA from the mirror.
        await git(["config", "uploadpack.allowAnySHA1InWant", "true"], partial)
    except GitError as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise RepoError(f"git clone {url} failed: {exc}") from exc
    shutil.rmtree(mirror, ignore_errors=True)
    partial.rename(mirror)


async def _resolve(repo: Path, ref: str) -> str | None:
    try:
        out = await git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], repo)
    except GitError:
        return None
    return out.strip() or None


async def checkout(source_repo: Path, commit: str, workdir: Path) -> None:
    """Fill the empty ``workdir`` with ``commit`` of ``source_repo``, detached, no remote.

    Raises:
        RepoError: a git step failed.
    """
    try:
        await git(["init", "--quiet", str(workdir)], workdir)
        await git(["fetch", "--quiet", "--no-tags", str(source_repo), commit], workdir)
        await git(["checkout", "--quiet", "--detach", commit], workdir)
    except GitError as exc:
        raise RepoError(f"checkout of {commit} failed: {exc}") from exc


def _write_files(files: dict[str, str], workdir: Path) -> None:
    for name, text in files.items():
        rel = PurePosixPath(name)
        if rel.is_absolute() or not rel.parts or ".." in rel.parts or rel.parts[0] == ".git":
            raise RepoError(f"files: {name!r} is not a relative path inside the repository")
        target = workdir.joinpath(*rel.parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


async def commit_files(files: dict[str, str], workdir: Path) -> str:
    """Write ``files`` into ``workdir`` and commit them; the commit's SHA.

    Raises:
        RepoError: a path escapes the repository or a git step failed.
    """
    _write_files(files, workdir)
    try:
        await git(["init", "--quiet"], workdir)
        await git(["add", "--all", "--force"], workdir)
        await git(["commit", "--quiet", "--allow-empty", "-m", "benchbook: case files"], workdir)
        return (await git(["rev-parse", "HEAD"], workdir)).strip()
    except GitError as exc:
        raise RepoError(f"committing files failed: {exc}") from exc


async def audit(workdir: Path, commit: str) -> EnvAudit:
    """HEAD and cleanliness of ``workdir`` against ``commit`` (SPEC H.3)."""
    problems: list[str] = []
    try:
        head = (await git(["rev-parse", "HEAD"], workdir)).strip()
        status = await git(["status", "--porcelain", "--ignored", "--untracked-files=all"], workdir)
    except GitError as exc:
        return EnvAudit(ok=False, commit=commit, problems=[f"git failed: {exc}"])
    lines = [line for line in status.splitlines() if line]
    untracked = [line[3:] for line in lines if line[:2] in ("??", "!!")]
    if head != commit:
        problems.append(f"HEAD is {head}, expected {commit}")
    if lines:
        problems.append(f"working tree not clean: {len(lines)} entries")
    return EnvAudit(
        ok=not problems,
        commit=commit,
        head=head,
        clean=not lines,
        untracked=untracked,
        problems=problems,
    )


async def worktree_tree(workdir: Path, index_path: Path, sandbox: SandboxPolicy) -> str:
    """The tree object of ``workdir`` as it is now (new files included, ignored ones not),
    written through a temporary index so the harness's own index is untouched. Git runs in
    the case's sandbox: case code has run in the working copy (its ``.git/config`` may name
    filters), so only the case's directory is writable."""
    real_index = workdir / ".git" / "index"
    if real_index.is_file():
        shutil.copyfile(real_index, index_path)  # keeps stat data: unchanged files are not rehashed
    env = {"GIT_INDEX_FILE": str(index_path)}
    writable = [index_path.parent]  # the case root: the working copy and the index beside it
    await git(["add", "--all"], workdir, env=env, sandbox=sandbox, writable=writable)
    out = await git(["write-tree"], workdir, env=env, sandbox=sandbox, writable=writable)
    return out.strip()


async def run_setup(
    commands: list[str], workdir: Path, timeout_s: float, sandbox: SandboxPolicy
) -> None:
    """Run each ``setup`` command with ``/bin/sh -c`` in ``workdir``, in the case's sandbox
    (only the working copy writable, no network, clean environment).

    Raises:
        RepoError: a command exited non-zero, timed out or could not start in the sandbox;
            names it with its stderr tail.
    """
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(workdir),
        "LANG": "C.UTF-8",
    }
    for command in commands:
        try:
            done = await run_sandboxed(
                ["/bin/sh", "-c", command],
                policy=sandbox,
                cwd=workdir,
                env=env,
                timeout_s=timeout_s,
                writable=[workdir],
                output_limit_bytes=64 * 1024,
            )
        except (OSError, SandboxError) as exc:
            raise RepoError(f"setup command cannot start: {command}: {exc}") from exc
        if done.timed_out:
            raise RepoError(f"setup command timed out: {command}")
        if done.exit_code != 0:
            detail = tail(done.stderr.decode("utf-8", "replace"), _SETUP_TAIL_CHARS)
            raise RepoError(f"setup command failed (exit {done.exit_code}): {command}: {detail}")


async def _prepare(case_input: CaseInput, config: RuntimeConfig, workdir: Path) -> str:
    """Check out the case's source into ``workdir``; the commit it must be at."""
    env = case_input.env
    assert isinstance(env, RepoEnv)
    source = env.source
    if isinstance(source, GitSource):
        mirror = mirror_path(config.mirrors, source.git)
        commit = await ensure_commit(mirror, source.git, source.ref, config.git_allowed_hosts)
        await checkout(mirror, commit, workdir)
        return commit
    if isinstance(source, FilesSource):
        return await commit_files(source.files, workdir)
    if "image" not in config.env_providers:
        raise RepoError("no environment provider for image")
    local = Path(source.path)
    head = await _resolve(local, "HEAD")
    if head is None:
        raise RepoError(f"{source.path} is not a git repository with a commit")
    await checkout(local, head, workdir)
    return head


async def open_repo(
    case_input: CaseInput, config: RuntimeConfig, case_root: Path, workdir: Path
) -> Workspace:
    """Provision a repo environment in the empty ``workdir`` (see the module docstring).

    Returns a workspace with ``error`` set (never raises) when the checkout, the audit or a
    setup command fails; ``audit`` is set whenever the audit ran.
    """
    env = case_input.env
    assert isinstance(env, RepoEnv)
    try:
        commit = await _prepare(case_input, config, workdir)
    except (RepoError, OSError) as exc:
        return Workspace(workdir=workdir, kind="repo", error=str(exc))
    result = await audit(workdir, commit)
    if not result.ok:
        message = "environment audit failed: " + "; ".join(result.problems)
        return Workspace(workdir=workdir, kind="repo", audit=result, error=message)
    index_path = case_root / "snapshot.index"
    if isinstance(env.setup, str):  # the service resolves recipe names before a case starts
        message = f"env.setup: environment recipe {env.setup!r} was not resolved; nothing ran"
        return Workspace(workdir=workdir, kind="repo", audit=result, error=message)
    try:
        await run_setup(env.setup, workdir, case_input.timeout_s, config.sandbox)
        # The baseline is the post-setup tree: the diff shows the harness's changes only.
        base_tree = (
            await worktree_tree(workdir, index_path, config.sandbox) if env.setup else commit
        )
    except (RepoError, GitError, OSError) as exc:
        return Workspace(workdir=workdir, kind="repo", audit=result, error=str(exc))

    async def snapshot() -> EnvSnapshot:
        index_path.unlink(missing_ok=True)
        tree = await worktree_tree(workdir, index_path, config.sandbox)
        diff = await git(
            ["diff", "--binary", "--no-color", "--no-ext-diff", base_tree, tree],
            workdir,
            sandbox=config.sandbox,
            writable=[case_root],
        )
        return EnvSnapshot(diff=diff, audit=result)

    return Workspace(workdir=workdir, kind="repo", audit=result, snapshot_fn=snapshot)
