"""Which dataset versions a workspace sees, and the datasets list built on it (SPEC B).

The owner-first rule, written once: a workspace sees its own live versions of an id, and the
live ``_shared`` versions of an id only while it holds no live version of that id itself (its
own id shadows the shared one until every own version is deleted). :func:`visible_to` is that
rule as a SQL condition; owner resolution (:func:`owner_of`), the datasets list
(:func:`list_heads`) and the recipe page's datasets (:func:`made_by_recipe`) all filter with
it. They read ``dataset_heads`` (one row per id with a live version, ``store.dataset_heads``),
so they cost one row per id, never one per version.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import (
    JSON,
    ColumnElement,
    Connection,
    and_,
    cast,
    exists,
    func,
    or_,
    select,
    true,
)

from benchbook.store.dataset_heads import SEARCH_SEPARATOR
from benchbook.store.datasets import VersionRow, version_row
from benchbook.store.tables import SHARED_WORKSPACE, dataset_heads, dataset_versions
from benchbook.store.tag_search import (
    case_tag_matches,
    lowered,
    read_version_tags,
    version_tag_matches,
    version_tags_json,
)

_V = dataset_versions.c
_H = dataset_heads.c


def visible_to(workspace: str) -> ColumnElement[bool]:
    """The owner-first rule on ``dataset_heads`` (a row per id with a live version): the
    workspace's own id, or a ``_shared`` id the workspace holds no live version of."""
    own = dataset_heads.alias("own")
    held = exists().where(own.c.workspace == workspace, own.c.dataset_id == _H.dataset_id)
    return or_(_H.workspace == workspace, and_(_H.workspace == SHARED_WORKSPACE, ~held))


def owner_of(conn: Connection, workspace: str, dataset_id: str) -> str | None:
    """The workspace whose versions of ``dataset_id`` ``workspace`` sees (itself or
    ``_shared``), or None when it sees none. One statement, two key lookups."""
    stmt = select(_H.workspace).where(_H.dataset_id == dataset_id, visible_to(workspace)).limit(1)
    owner = conn.scalar(stmt)
    return None if owner is None else str(owner)


@dataclass(frozen=True)
class DatasetHead:
    """One id of the datasets list: its latest version's row and the id's live totals."""

    latest: VersionRow
    versions: int
    updated_at: datetime
    version_tags: dict[str, str]


@dataclass(frozen=True)
class HeadPage:
    """A page of :func:`dataset_heads` with totals over every id that passed the filters."""

    items: list[DatasetHead]
    total: int
    total_cases: int
    total_versions: int


def _matches(conn: Connection, needle: str) -> ColumnElement[bool]:
    """Case-insensitive substring (``str.lower`` on both sides) of the id, the latest version's
    description or one of its content tags (a JSON list: matched tag by tag, never across two),
    a version tag of a live version of the id — all four in the head's ``search_text``
    (``store.dataset_heads``) — or a tag of one of the latest version's cases
    (``store.tag_search``). A needle holding the text's field separator is matched field by
    field on the latest version's row instead (the caller joins it: :func:`_needs_version_row`),
    so it can never match across two fields either."""
    escaped = needle.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    pattern = f"%{escaped}%"
    if not _needs_version_row(needle):
        return or_(
            _H.search_text.like(pattern, escape="\\"),
            case_tag_matches(conn, _H.latest_pk, pattern),
        )
    if conn.dialect.name == "postgresql":
        tag = func.json_array_elements_text(cast(_V.tags, JSON)).table_valued("value")
    else:
        tag = func.json_each(_V.tags).table_valued("value")
    return or_(
        lowered(conn, _H.dataset_id).like(pattern, escape="\\"),
        lowered(conn, _V.description).like(pattern, escape="\\"),
        exists().where(lowered(conn, tag.c.value).like(pattern, escape="\\")),
        version_tag_matches(conn, _H.workspace, _H.dataset_id, pattern),
        case_tag_matches(conn, _H.latest_pk, pattern),
    )


def _needs_version_row(needle: str) -> bool:
    """Whether a search for ``needle`` reads the latest version rows (it holds the separator
    of ``search_text``: never in an id, hardly ever typed)."""
    return SEARCH_SEPARATOR in needle


def _order(conn: Connection, c: Any, sort: str) -> list[Any]:
    """``name`` ascending (code point order of the lower-cased id), ``updated`` and ``cases``
    descending (``cases`` ties by id); remaining ties in the order the ids first appeared."""
    collate = "C" if conn.dialect.name == "postgresql" else "BINARY"
    if sort == "updated":
        return [c.updated_at.desc(), c.first_pk]
    if sort == "cases":
        return [c.case_count.desc(), c.dataset_id.collate(collate), c.first_pk]
    return [func.lower(c.dataset_id).collate(collate), c.first_pk]


def list_heads(
    conn: Connection,
    workspace: str,
    *,
    search: str | None,
    owner: str,
    sort: str,
    limit: int,
    offset: int,
) -> HeadPage:
    """One page of the ids ``workspace`` sees, with totals, in ONE statement.

    Args:
        search: case-insensitive substring of the id, the latest version's description or one
            of its content tags; None or empty matches all.
        owner: ``all``, ``own`` (the workspace's ids) or ``shared`` (``_shared`` ids shown
            through).
        sort: ``name``, ``updated`` or ``cases`` (see :func:`_order`).
        limit, offset: the page (offset based; totals cover the whole filtered listing).
    """
    listed = select(dataset_heads).where(visible_to(workspace))
    if owner == "own":
        listed = listed.where(_H.workspace == workspace)
    elif owner == "shared":
        listed = listed.where(_H.workspace != workspace)
    if search and _needs_version_row(search):
        listed = listed.join(dataset_versions, _V.pk == _H.latest_pk)
    if search:
        listed = listed.where(_matches(conn, search))
    heads = listed.cte("heads")
    totals = select(
        func.count().label("total"),
        func.coalesce(func.sum(heads.c.case_count), 0).label("total_cases"),
        func.coalesce(func.sum(heads.c.versions), 0).label("total_versions"),
    ).subquery("totals")
    page = (
        select(heads)
        .order_by(*_order(conn, heads.c, sort))
        .limit(limit)
        .offset(offset)
        .subquery("page")
    )
    p = page.c
    stmt = (
        select(
            totals,
            p.versions,
            p.updated_at,
            p.first_pk,
            version_tags_json(conn, p.workspace, p.dataset_id).label("version_tags"),
            *dataset_versions.c,
        )
        .select_from(
            totals.outerjoin(page, true()).outerjoin(dataset_versions, _V.pk == p.latest_pk)
        )
        .order_by(*_order(conn, p, sort))
    )
    rows = conn.execute(stmt).all()
    items = [
        DatasetHead(
            latest=version_row(row),
            versions=int(row.versions),
            updated_at=row.updated_at,
            version_tags=read_version_tags(row.version_tags),
        )
        for row in rows
        if row.pk is not None
    ]
    first = rows[0]
    return HeadPage(items, int(first.total), int(first.total_cases), int(first.total_versions))


def made_by_recipe(
    conn: Connection, workspace: str, recipe_id: str
) -> list[tuple[VersionRow, bool]]:
    """Visible live versions whose provenance text names ``recipe_id`` and ``via: recipe``,
    each with whether it is its id's latest. A prefilter on the canonical JSON: the caller
    checks ``produced_by`` exactly."""
    names = orjson.dumps({"id": recipe_id}).decode()[1:-1]
    stmt = (
        select(dataset_versions, _H.latest_pk)
        .join(dataset_heads, and_(_H.workspace == _V.workspace, _H.dataset_id == _V.dataset_id))
        .where(
            visible_to(workspace),
            _V.deleted_at.is_(None),
            _V.produced_by.contains('"via":"recipe"', autoescape=True),
            _V.produced_by.contains(names, autoescape=True),
        )
    )
    return [(version_row(row), row.pk == row.latest_pk) for row in conn.execute(stmt)]
