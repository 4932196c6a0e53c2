"""Tags on the datasets list (issue 14 item 11), as SQL pieces for ``store.dataset_owners``:
each listed id's version tags (tag → version) as one correlated JSON aggregate, and the search
conditions that find a version tag or a tag of the latest version's cases.

Case bodies are canonical JSON (``store.case_writes``), so a case's tags sit at ``$.tags``: a
substring test on the whole body is the cheap filter, the JSON test then keeps only a match
inside a tag. A search that matches no id reads every latest version's bodies (~0.1 s per 100k
cases on SQLite).
"""

from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy import ColumnElement, Connection, exists, func, literal, select

from benchbook.store.tables import case_bodies, dataset_versions, version_cases, version_tags

# Its own alias: the list query that embeds these pieces reads dataset_versions too, and an
# unaliased table would correlate to the outer (latest) version row.
_tagged = dataset_versions.alias("tagged_version")


def lowered(conn: Connection, column: Any) -> Any:
    """``column`` lower-cased the same way on both backends: SQLite's ``lower()`` folds ASCII
    only, so there it is ``bb_lower`` (``store.engine``: Python's ``str.lower``)."""
    return func.bb_lower(column) if conn.dialect.name == "sqlite" else func.lower(column)


def version_tags_json(conn: Connection, workspace: Any, dataset_id: Any) -> Any:
    """A scalar subquery: ``{tag: version}`` of the live versions of (``workspace``,
    ``dataset_id``) — ``json_group_object`` text on SQLite, ``json_object_agg`` on PostgreSQL
    (NULL when there is none); read it with :func:`read_version_tags`."""
    t, v = version_tags.c, _tagged.c
    pg = conn.dialect.name == "postgresql"
    aggregate = func.json_object_agg if pg else func.json_group_object
    return (
        select(aggregate(t.tag, v.version))
        .select_from(version_tags.join(_tagged, v.pk == t.version_pk))
        .where(t.workspace == workspace, t.dataset_id == dataset_id, v.deleted_at.is_(None))
        .scalar_subquery()
    )


def read_version_tags(value: Any) -> dict[str, str]:
    """The aggregate's value as ``{tag: version}`` sorted by tag (``{}`` for none)."""
    if value is None:
        return {}
    parsed = orjson.loads(value) if isinstance(value, str | bytes) else value
    return {str(k): str(parsed[k]) for k in sorted(parsed)}


def version_tag_matches(
    conn: Connection, workspace: Any, dataset_id: Any, pattern: str
) -> ColumnElement[bool]:
    """Whether a live version of the id carries a tag ``LIKE pattern`` (lower-cased; ``\\``
    escapes)."""
    t, v = version_tags.c, _tagged.c
    return exists().where(
        t.workspace == workspace,
        t.dataset_id == dataset_id,
        v.pk == t.version_pk,
        v.deleted_at.is_(None),
        lowered(conn, t.tag).like(pattern, escape="\\"),
    )


def case_tag_matches(conn: Connection, version_pk: Any, pattern: str) -> ColumnElement[bool]:
    """Whether a case of version ``version_pk`` has a tag ``LIKE pattern`` (lower-cased;
    ``\\`` escapes): the body's text first, then its ``tags`` one by one."""
    b, vc = case_bodies.c, version_cases.c
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import JSONB  # loaded with the dialect; not on SQLite

        tags = func.jsonb_extract_path(b.body.cast(JSONB), literal("tags"))
        tag = func.jsonb_array_elements_text(tags).table_valued("value")
    else:
        tag = func.json_each(b.body, "$.tags").table_valued("value")
    return exists().where(
        vc.version_pk == version_pk,
        b.id == vc.body_id,
        lowered(conn, b.body).like(pattern, escape="\\"),
        exists().where(lowered(conn, tag.c.value).like(pattern, escape="\\")),
    )
