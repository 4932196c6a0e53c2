"""dataset heads: the search text of each id

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-03 16:15:00.000000

Issue 15 item 5: a search of the datasets list read every head's latest version row and folded
its id, description and each content tag (and probed the version tags) per listed id, ~100 ms
for 10,800 ids. ``dataset_heads.search_text`` keeps those fields folded once (``str.lower``),
joined by ``\\x1f``: the id, the latest version's description, its content tags, the tags of the
id's live versions. Backfilled here; the folding is frozen here (not imported) so later code
changes cannot alter history.
"""

from collections.abc import Sequence

import orjson
import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_HEADS = (
    "SELECT h.workspace, h.dataset_id, v.description, v.tags FROM dataset_heads h"
    " JOIN dataset_versions v ON v.pk = h.latest_pk"
)
_TAGS = (
    "SELECT t.workspace, t.dataset_id, t.tag FROM version_tags t"
    " JOIN dataset_versions v ON v.pk = t.version_pk WHERE v.deleted_at IS NULL"
)
_SET = (
    "UPDATE dataset_heads SET search_text = :text"
    " WHERE workspace = :workspace AND dataset_id = :dataset_id"
)


def upgrade() -> None:
    with op.batch_alter_table("dataset_heads") as batch:
        batch.add_column(sa.Column("search_text", sa.Text, nullable=True))
    bind = op.get_bind()
    tagged: dict[tuple[str, str], list[str]] = {}
    for workspace, dataset_id, tag in bind.execute(sa.text(_TAGS)):
        tagged.setdefault((workspace, dataset_id), []).append(tag)
    out = []
    for workspace, dataset_id, description, tags in bind.execute(sa.text(_HEADS)).all():
        fields = [dataset_id, *([description] if description is not None else [])]
        fields += [str(t) for t in orjson.loads(tags)]
        fields += sorted(tagged.get((workspace, dataset_id), []))
        text = "\x1f".join(f.lower() for f in fields)
        out.append({"workspace": workspace, "dataset_id": dataset_id, "text": text})
    for start in range(0, len(out), 5000):
        bind.execute(sa.text(_SET), out[start : start + 5000])
    with op.batch_alter_table("dataset_heads") as batch:
        batch.alter_column("search_text", existing_type=sa.Text, nullable=False)


def downgrade() -> None:
    with op.batch_alter_table("dataset_heads") as batch:
        batch.drop_column("search_text")
