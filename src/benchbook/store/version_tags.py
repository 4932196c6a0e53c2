"""Version tags: movable names (``stable``, ``prod``) that point at one version of a dataset id in
one workspace; a tag set on a version moves off its sibling."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, delete, insert, or_, select

from benchbook.store.dataset_heads import lock_dataset, refresh_heads
from benchbook.store.tables import utcnow, version_tags


def tags_by_version(conn: Connection, workspace: str, dataset_id: str) -> dict[int, list[str]]:
    """``{version_pk: [tag, …]}`` for one dataset in one workspace."""
    t = version_tags.c
    out: dict[int, list[str]] = {}
    rows = conn.execute(
        select(t.version_pk, t.tag)
        .where(t.workspace == workspace, t.dataset_id == dataset_id)
        .order_by(t.tag)
    )
    for pk, tag in rows:
        out.setdefault(pk, []).append(tag)
    return out


def tags_of_versions(conn: Connection, version_pks: Sequence[int]) -> dict[int, list[str]]:
    """``{version_pk: [tag, …]}`` (tags sorted) for any versions, in one statement."""
    t = version_tags.c
    out: dict[int, list[str]] = {}
    if not version_pks:
        return out
    rows = conn.execute(
        select(t.version_pk, t.tag).where(t.version_pk.in_(list(version_pks))).order_by(t.tag)
    )
    for pk, tag in rows:
        out.setdefault(pk, []).append(tag)
    return out


def resolve_tag(conn: Connection, workspace: str, dataset_id: str, tag: str) -> int | None:
    """The version pk a tag points at, or None."""
    t = version_tags.c
    return conn.scalar(
        select(t.version_pk).where(
            t.workspace == workspace, t.dataset_id == dataset_id, t.tag == tag
        )
    )


def replace_tags(
    conn: Connection, workspace: str, dataset_id: str, version_pk: int, tags: list[str], actor: str
) -> None:
    """Make ``tags`` exactly the tags of the version, moving any tag held by a sibling; the
    id's ``dataset_heads`` row follows.

    Two writers of the same id run one after the other (:func:`lock_dataset`, taken before the
    delete): otherwise both delete, both insert, and the second insert of a tag violated
    ``version_tags_pkey`` on PostgreSQL (issue 32)."""
    lock_dataset(conn, workspace, dataset_id)
    t = version_tags.c
    conn.execute(
        delete(version_tags).where(
            t.workspace == workspace,
            t.dataset_id == dataset_id,
            or_(t.version_pk == version_pk, t.tag.in_(tags)),
        )
    )
    if tags:
        now = utcnow()
        conn.execute(
            insert(version_tags),
            [
                {
                    "workspace": workspace,
                    "dataset_id": dataset_id,
                    "tag": tag,
                    "version_pk": version_pk,
                    "set_by": actor,
                    "set_at": now,
                }
                for tag in tags
            ],
        )
    refresh_heads(conn, [(workspace, dataset_id)])  # the head's search text holds version tags
