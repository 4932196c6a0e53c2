"""version content hashes cover the case hashes sorted by case id

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 08:00:00.000000

SPEC B (issue 8): a version's identity is its cases as a set matched by id plus its metadata;
the order of cases is presentation. The content hash therefore covers the case hashes sorted by
case id (code point order) instead of in position order. Every stored hash is recomputed; a
version whose cases were already in id order keeps its hash. Runs recorded the hash of the
version they ran (``runs.dataset_content_hash``, the reproducibility record, scorecard summaries):
they follow, since the content itself did not change. Downgrade restores the position-order hash.

The hash definition is frozen here (not imported) so later code changes cannot alter history.
"""

import hashlib
from collections.abc import Sequence

import orjson
import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_VERSIONS = (
    "SELECT pk, dataset_id, version, description, tags, produced_by, content_hash"
    " FROM dataset_versions ORDER BY pk"
)
_CASES = (
    "SELECT vc.position, vc.case_id, cb.hash FROM version_cases vc"
    " JOIN case_bodies cb ON cb.id = vc.body_id WHERE vc.version_pk = :pk"
)


def _content_hash(meta: dict[str, object], case_hashes: list[str]) -> str:
    h = hashlib.sha256(orjson.dumps(meta, option=orjson.OPT_SORT_KEYS) + b"\n")
    for case_hash in case_hashes:
        h.update(case_hash.encode("ascii") + b"\n")
    return h.hexdigest()


def _rehash(by_id: bool) -> None:
    conn = op.get_bind()
    for pk, dataset_id, version, description, tags, produced_by, old in conn.execute(
        sa.text(_VERSIONS)
    ).all():
        meta = {
            "id": dataset_id,
            "version": version,
            "description": description,
            "tags": orjson.loads(tags),
            "produced_by": orjson.loads(produced_by) if produced_by else None,
        }
        rows = list(conn.execute(sa.text(_CASES), {"pk": pk}))
        rows.sort(key=(lambda r: r[1]) if by_id else (lambda r: r[0]))
        new = _content_hash(meta, [r[2] for r in rows])
        if new == old:
            continue
        conn.execute(
            sa.text("UPDATE dataset_versions SET content_hash = :new WHERE pk = :pk"),
            {"new": new, "pk": pk},
        )
        # One parameter per use: PostgreSQL types each one once (varchar vs text).
        params = {"new": new, "old": old, "pk": pk, "new_t": new, "old_t": old}
        conn.execute(
            sa.text(
                "UPDATE runs SET dataset_content_hash = :new,"
                " reproducibility = replace(reproducibility, :old_t, :new_t)"
                " WHERE dataset_pk = :pk AND dataset_content_hash = :old"
            ),
            params,
        )
        conn.execute(
            sa.text(
                "UPDATE scorecards SET summary = replace(summary, :old_t, :new_t)"
                " WHERE summary IS NOT NULL AND run_id IN"
                " (SELECT id FROM runs WHERE dataset_pk = :pk)"
            ),
            params,
        )


def upgrade() -> None:
    _rehash(by_id=True)


def downgrade() -> None:
    _rehash(by_id=False)
