"""Owner and version resolution shared by the dataset operations (SPEC B).

Owner resolution is per id: the caller's workspace owns an id while it has a live version of
it; otherwise ``_shared`` shows through. A version reference is an exact SemVer, ``latest`` or a
version tag.
"""

from __future__ import annotations

from sqlalchemy import Connection

from benchbook.datasets.versions import LATEST, is_semver, pick_latest
from benchbook.errors import NotFound
from benchbook.store import datasets as repo
from benchbook.store.dataset_owners import owner_of


def resolve_owner(conn: Connection, workspace: str, dataset_id: str) -> str:
    """The workspace whose versions of ``dataset_id`` the caller sees (the owner-first rule of
    ``store.dataset_owners``). Raises NotFound."""
    owner = owner_of(conn, workspace, dataset_id)
    if owner is None:
        raise NotFound(f"dataset {dataset_id!r} not found", {"id": dataset_id})
    return owner


def resolve_version(conn: Connection, workspace: str, dataset_id: str, ref: str) -> repo.VersionRow:
    """Resolve ``ref`` (SemVer, ``latest`` or tag) to a live version the caller can read."""
    owner = resolve_owner(conn, workspace, dataset_id)
    missing = NotFound(f"{dataset_id}@{ref} not found", {"id": dataset_id, "version": ref})
    if ref == LATEST:
        live = repo.live_versions(conn, owner, dataset_id)
        top = pick_latest(v.version for v in live)
        return next(v for v in live if v.version == top)
    if is_semver(ref):
        row = repo.find_version(conn, owner, dataset_id, ref)
    else:
        pk = repo.resolve_tag(conn, owner, dataset_id, ref)
        row = next((v for v in repo.live_versions(conn, owner, dataset_id) if v.pk == pk), None)
    if row is None or not row.live:
        raise missing
    return row


def own_live_version(
    conn: Connection, workspace: str, dataset_id: str, version: str
) -> repo.VersionRow:
    """An exact, live version in the caller's own workspace (for deletes and tag writes).

    ``latest``, tags and ``_shared`` versions are never accepted here: NotFound, whose message
    says an exact SemVer version is needed when ``version`` is not one.
    """
    details = {"id": dataset_id, "version": version}
    if not is_semver(version):
        raise NotFound(
            f"{dataset_id}@{version} not found: deleting or tagging needs an exact SemVer version"
            f" (e.g. 1.0.0) of your own workspace, not {LATEST!r} or a tag",
            details,
        )
    row = repo.find_version(conn, workspace, dataset_id, version)
    if row is None or not row.live:
        raise NotFound(
            f"{dataset_id}@{version} not found among your workspace's live versions", details
        )
    return row
