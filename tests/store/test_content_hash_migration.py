"""Migration 0007: stored version content hashes are recomputed with the cases sorted by id
(SPEC B: case order is presentation, not identity), and runs that recorded the old hash follow."""

from __future__ import annotations

import hashlib
from pathlib import Path

import orjson
from alembic import command
from sqlalchemy import text

from benchbook.contracts import Case, Dataset
from benchbook.datasets.identity import case_body, dataset_meta, sha256_hex
from benchbook.services import datasets as svc
from benchbook.services.context import Context, local_admin_context
from benchbook.settings import Settings
from benchbook.store.engine import alembic_config, make_engine, migrate

CASES = [
    {"id": "b", "env": {"kind": "prompt"}, "task": "2+2", "expected": "4"},
    {"id": "a", "env": {"kind": "prompt"}, "task": "1+1", "expected": "2"},
]
DATASET = Dataset.model_validate(
    {"id": "ds", "version": "1.0.0", "description": "d", "tags": ["x"], "cases": CASES}
)


def _ordered_hash(hashes: list[str]) -> str:
    """The content hash as stored before migration 0007 (case hashes in position order)."""
    h = hashlib.sha256(orjson.dumps(dataset_meta(DATASET), option=orjson.OPT_SORT_KEYS) + b"\n")
    for case_hash in hashes:
        h.update(case_hash.encode() + b"\n")
    return h.hexdigest()


def test_a_version_stored_out_of_id_order_before_0007_re_registers_as_identical(
    empty_database_url: str, tmp_path: Path
) -> None:
    eng = make_engine(empty_database_url)
    command.upgrade(alembic_config(eng), "0006")
    bodies = [case_body(Case.model_validate(c)) for c in CASES]
    hashes = [sha256_hex(b) for b in bodies]
    old = _ordered_hash(hashes)
    with eng.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO workspaces (id, name, created_at)"
                " VALUES ('default', 'Default', CURRENT_TIMESTAMP)"
            )
        )
        conn.execute(
            text(
                "INSERT INTO dataset_versions (pk, workspace, dataset_id, version, is_prerelease,"
                " description, tags, content_hash, case_count, created_by, created_at) VALUES"
                " (1, 'default', 'ds', '1.0.0', false, 'd', '[\"x\"]', :h, 2, 't',"
                " CURRENT_TIMESTAMP)"
            ),
            {"h": old},
        )
        for i, (case, body, h) in enumerate(zip(CASES, bodies, hashes, strict=True)):
            conn.execute(
                text("INSERT INTO case_bodies (id, hash, body) VALUES (:i, :h, :b)"),
                {"i": i + 1, "h": h, "b": body.decode()},
            )
            conn.execute(
                text(
                    "INSERT INTO version_cases (version_pk, position, case_id, body_id)"
                    " VALUES (1, :p, :c, :i)"
                ),
                {"p": i, "c": case["id"], "i": i + 1},
            )
    migrate(eng)
    ctx: Context = local_admin_context(eng, Settings(home=tmp_path))
    again = svc.register_dataset(ctx, DATASET)
    assert not again.created
    assert again.content_hash == _ordered_hash([hashes[1], hashes[0]])  # a, then b
    command.downgrade(alembic_config(eng), "0006")
    with eng.connect() as conn:
        assert conn.scalar(text("SELECT content_hash FROM dataset_versions")) == old
    eng.dispose()
