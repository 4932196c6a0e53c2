"""Tag reads for the datasets list: every version tag of the listed workspaces in one query, and
which versions hold a case whose own ``tags`` contain a search text."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, bindparam, select, text

from benchbook.store.tables import version_tags

# A case body is canonical JSON (``store.case_writes``), so its tags sit at ``$.tags``. The
# LIKE on the whole body is the cheap filter; the JSON test then keeps only a match inside a
# tag. EXISTS stops at a version's first matching case.
_CASE_TAG_SQL = {
    "sqlite": """
        SELECT v.pk FROM dataset_versions v WHERE v.pk IN :pks AND EXISTS (
          SELECT 1 FROM version_cases vc JOIN case_bodies b ON b.id = vc.body_id
          WHERE vc.version_pk = v.pk AND b.body LIKE :pattern ESCAPE '\\'
            AND EXISTS (SELECT 1 FROM json_each(b.body, '$.tags') j
                        WHERE j.value LIKE :pattern ESCAPE '\\'))""",
    "postgresql": """
        SELECT v.pk FROM dataset_versions v WHERE v.pk IN :pks AND EXISTS (
          SELECT 1 FROM version_cases vc JOIN case_bodies b ON b.id = vc.body_id
          WHERE vc.version_pk = v.pk AND b.body ILIKE :pattern ESCAPE '\\'
            AND EXISTS (SELECT 1 FROM jsonb_array_elements_text(CAST(b.body AS jsonb) -> 'tags') t
                        WHERE t ILIKE :pattern ESCAPE '\\'))""",
}


def version_tags_in(
    conn: Connection, workspaces: Sequence[str]
) -> dict[tuple[str, str], dict[str, int]]:
    """``{(workspace, dataset_id): {tag: version_pk}}`` for every version tag in ``workspaces``
    (tags sorted)."""
    t = version_tags.c
    out: dict[tuple[str, str], dict[str, int]] = {}
    rows = conn.execute(
        select(t.workspace, t.dataset_id, t.tag, t.version_pk)
        .where(t.workspace.in_(list(workspaces)))
        .order_by(t.tag)
    )
    for workspace, dataset_id, tag, pk in rows:
        out.setdefault((workspace, dataset_id), {})[tag] = int(pk)
    return out


def versions_with_case_tag(conn: Connection, version_pks: Sequence[int], needle: str) -> set[int]:
    """The pks among ``version_pks`` with at least one case whose ``tags`` holds a tag
    containing ``needle`` (case-insensitive: SQLite ``LIKE`` for ASCII, PostgreSQL ``ILIKE``;
    ``%``, ``_`` and ``\\`` taken literally). A version without a match reads every case body
    (a full scan: ~0.1 s for 100k cases)."""
    if not version_pks or not needle:
        return set()
    escaped = needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    sql = text(_CASE_TAG_SQL["postgresql" if conn.dialect.name == "postgresql" else "sqlite"])
    sql = sql.bindparams(bindparam("pks", expanding=True))
    rows = conn.execute(sql, {"pks": list(version_pks), "pattern": f"%{escaped}%"})
    return {int(pk) for (pk,) in rows}
