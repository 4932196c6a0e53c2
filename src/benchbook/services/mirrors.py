"""The mirror cache (SPEC H.3, issue 12 item 4): seed a mirror from a local bundle or
repository, list the mirrors. Checkouts of ``repo`` environments read from these mirrors, so a
machine without network can run repository benchmarks once its mirrors are seeded.

Mirrors belong to the installation (one cache under ``BENCHBOOK_HOME/mirrors``, shared by every
workspace): seeding one is an installation-admin action; listing is a read (``mirrors:read``).
"""

from __future__ import annotations

from pathlib import Path

from benchbook.contracts.mirrors import Mirror, MirrorResult
from benchbook.errors import Forbidden, InvalidInput
from benchbook.eval.sync import run_sync
from benchbook.runtime.environments import mirrors as cache
from benchbook.services.context import Context
from benchbook.services.run_execution import runtime_config


def _mirror(stats: cache.MirrorStats) -> Mirror:
    return Mirror(
        repo=stats.repo,
        host=stats.host,
        url=stats.url,
        path=str(stats.path),
        commits=stats.commits,
        refs=stats.refs,
        shallow=stats.shallow,
        size_bytes=stats.size_bytes,
        updated_at=stats.updated_at,
    )


def add_mirror(ctx: Context, repo: str, source: str, host: str = "github.com") -> MirrorResult:
    """Create the mirror of ``host``/``repo`` from ``source``, or fetch ``source`` into it.

    Args:
        repo: ``owner/name`` (what a case's ``https://<host>/<owner>/<name>.git`` names).
        source: a path on this machine: a git bundle (single-commit bundles included) or a
            local repository (working tree or bare).
        host: the git host, ``github.com`` by default.

    Returns:
        The mirror after seeding and whether it was created. Seeding again from the same
        source changes nothing.

    Raises:
        Forbidden: the caller is not an installation admin.
        InvalidInput: ``repo`` is not ``owner/name``, a bad host, a source that does not exist
            or is neither a bundle nor a repository, or git failed; a new mirror leaves
            nothing on disk and an existing one keeps its refs.
    """
    ctx.require("mirrors:read")
    if not (ctx.principal.role == "admin" and ctx.principal.can_publish_shared):
        raise Forbidden("only installation admins may seed mirrors", {"action": "mirrors:write"})
    try:
        stats, created = run_sync(
            cache.seed_mirror(runtime_config(ctx.settings).mirrors, repo, Path(source), host)
        )
    except cache.MirrorError as exc:
        raise InvalidInput(str(exc), {"repo": repo, "source": source, "host": host}) from exc
    return MirrorResult(mirror=_mirror(stats), created=created)


def list_mirrors(ctx: Context) -> list[Mirror]:
    """Every mirror of the cache, sorted by host then ``owner/name``."""
    ctx.require("mirrors:read")
    try:
        found = run_sync(cache.list_mirrors(runtime_config(ctx.settings).mirrors))
    except cache.MirrorError as exc:
        raise InvalidInput(str(exc)) from exc
    return [_mirror(s) for s in found]
