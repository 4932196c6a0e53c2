"""``dataset_heads``: one row per (workspace, dataset id) that has a live version, holding the
id's latest version (``datasets.versions.pick_latest``: highest release, else highest
prerelease; ties go to the oldest row), its live version count, the latest's case count, the
newest live ``created_at`` and the oldest live row's pk (the listing's tie order).

Refreshed by the store in the transaction of every version write (``finish_version``,
``set_deleted``), so it never disagrees with ``dataset_versions`` after a commit. On
PostgreSQL a transaction-level advisory lock per id serializes concurrent refreshes of one id:
the second recomputes after the first commits and so sees its version.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import Connection, delete, insert, select, text

from benchbook.datasets.versions import pick_latest
from benchbook.store.tables import dataset_heads, dataset_versions

_V = dataset_versions.c
_H = dataset_heads.c


def refresh_heads(conn: Connection, keys: Iterable[tuple[str, str]]) -> None:
    """Recompute the head of each ``(workspace, dataset_id)`` from its live versions (delete
    it when none is left). One read and at most two writes per id."""
    for workspace, dataset_id in sorted(set(keys)):
        if conn.dialect.name == "postgresql":
            conn.execute(
                text("SELECT pg_advisory_xact_lock(hashtextextended(:key, 15))"),
                {"key": f"dataset_heads/{workspace}/{dataset_id}"},
            )
        rows = conn.execute(
            select(_V.pk, _V.version, _V.case_count, _V.created_at)
            .where(_V.workspace == workspace, _V.dataset_id == dataset_id, _V.deleted_at.is_(None))
            .order_by(_V.pk)
        ).all()
        conn.execute(
            delete(dataset_heads).where(_H.workspace == workspace, _H.dataset_id == dataset_id)
        )
        if not rows:
            continue
        top = pick_latest(r.version for r in rows)
        latest = next(r for r in rows if r.version == top)
        conn.execute(
            insert(dataset_heads).values(
                workspace=workspace,
                dataset_id=dataset_id,
                latest_pk=latest.pk,
                versions=len(rows),
                case_count=latest.case_count,
                updated_at=max(r.created_at for r in rows),
                first_pk=rows[0].pk,
            )
        )


def refresh_heads_of(conn: Connection, version_pks: Iterable[int]) -> None:
    """:func:`refresh_heads` for the ids of these version rows."""
    keys = conn.execute(
        select(_V.workspace, _V.dataset_id).where(_V.pk.in_(list(version_pks))).distinct()
    ).all()
    refresh_heads(conn, [(str(ws), str(did)) for ws, did in keys])
