"""``dataset_heads``: one row per (workspace, dataset id) that has a live version, holding the
id's latest version (``datasets.versions.pick_latest``: highest release, else highest
prerelease; ties go to the oldest row), its live version count, the latest's case count, the
newest live ``created_at`` and the oldest live row's pk (the listing's tie order), and the
id's search text (:func:`search_text`: what the list's search matches, folded, in one column of
a narrow table, so a search reads no version row and calls no function per field).

Refreshed by the store in the transaction of every version write (``finish_version``,
``set_deleted``) and of every version-tag write (``replace_tags``), so it never disagrees with
``dataset_versions`` or ``version_tags`` after a commit. On PostgreSQL a transaction-level
advisory lock per id serializes concurrent refreshes of one id: the second recomputes after
the first commits and so sees its version.
"""

from __future__ import annotations

from collections.abc import Iterable

import orjson
from sqlalchemy import Connection, delete, insert, select

from benchbook.datasets.versions import pick_latest
from benchbook.store.engine import advisory_lock
from benchbook.store.tables import dataset_heads, dataset_versions, version_tags

_V = dataset_versions.c
_H = dataset_heads.c
_T = version_tags.c

SEARCH_SEPARATOR = "\x1f"  # between the fields of ``search_text``: a needle without it never
# matches across two of them


def search_text(
    dataset_id: str, description: str | None, tags_json: str, version_tag_names: Iterable[str]
) -> str:
    """The id, the latest version's description, each of its content tags (``tags_json``: the
    stored canonical JSON list) and each live version tag, folded with ``str.lower`` (as the
    search folds its needle; SQLite's ``bb_lower`` is the same function) and joined by
    :data:`SEARCH_SEPARATOR`. ``LIKE '%needle%'`` on it, for a needle without the separator,
    is true exactly when one field contains the needle."""
    fields = [dataset_id, *([description] if description is not None else [])]
    fields += [str(t) for t in orjson.loads(tags_json)]
    fields += sorted(version_tag_names)
    return SEARCH_SEPARATOR.join(f.lower() for f in fields)


def lock_dataset(conn: Connection, workspace: str, dataset_id: str) -> None:
    """Serialize this transaction's writes of one dataset id's head and version tags with
    every other's (:func:`~benchbook.store.engine.advisory_lock`)."""
    advisory_lock(conn, f"dataset_heads/{workspace}/{dataset_id}")


def refresh_heads(conn: Connection, keys: Iterable[tuple[str, str]]) -> None:
    """Recompute the head of each ``(workspace, dataset_id)`` from its live versions and their
    version tags (delete it when none is left). Two reads and at most two writes per id."""
    for workspace, dataset_id in sorted(set(keys)):
        lock_dataset(conn, workspace, dataset_id)
        rows = conn.execute(
            select(_V.pk, _V.version, _V.case_count, _V.created_at, _V.description, _V.tags)
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
        tagged = conn.scalars(
            select(_T.tag).where(
                _T.workspace == workspace,
                _T.dataset_id == dataset_id,
                _T.version_pk.in_([r.pk for r in rows]),
            )
        ).all()
        conn.execute(
            insert(dataset_heads).values(
                workspace=workspace,
                dataset_id=dataset_id,
                latest_pk=latest.pk,
                versions=len(rows),
                case_count=latest.case_count,
                updated_at=max(r.created_at for r in rows),
                first_pk=rows[0].pk,
                search_text=search_text(dataset_id, latest.description, latest.tags, tagged),
            )
        )


def refresh_heads_of(conn: Connection, version_pks: Iterable[int]) -> None:
    """:func:`refresh_heads` for the ids of these version rows."""
    keys = conn.execute(
        select(_V.workspace, _V.dataset_id).where(_V.pk.in_(list(version_pks))).distinct()
    ).all()
    refresh_heads(conn, [(str(ws), str(did)) for ws, did in keys])
