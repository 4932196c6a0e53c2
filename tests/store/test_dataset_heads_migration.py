"""Migration 0011: ``dataset_heads`` is backfilled from the live versions already stored, so the
datasets list and owner resolution see them (highest release latest, tombstones left out).
Migration 0013: each head's search text is backfilled."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from sqlalchemy import text

from benchbook.services import datasets as svc
from benchbook.services.context import local_admin_context
from benchbook.settings import Settings
from benchbook.store.engine import alembic_config, make_engine, migrate

_WORKSPACE = "INSERT INTO workspaces (id, name, created_at) VALUES (:ws, :ws, CURRENT_TIMESTAMP)"
_VERSION = (
    "INSERT INTO dataset_versions (pk, workspace, dataset_id, version, is_prerelease,"
    " description, tags, content_hash, case_count, created_by, created_at, deleted_at) VALUES"
    " (:pk, :ws, :id, :v, :pre, NULL, '[]', 'h', :n, 't', CURRENT_TIMESTAMP, :gone)"
)


def test_heads_are_backfilled_from_the_live_versions(
    empty_database_url: str, tmp_path: Path
) -> None:
    eng = make_engine(empty_database_url)
    command.upgrade(alembic_config(eng), "0010")
    with eng.begin() as conn:
        for ws in ("default", "_shared"):
            conn.execute(text(_WORKSPACE), {"ws": ws})
        rows = [
            (1, "default", "ds", "1.9.0", False, 9, None),
            (2, "default", "ds", "1.10.0", False, 10, None),
            (3, "default", "ds", "2.0.0-rc.1", True, 20, None),
            (4, "default", "gone", "1.0.0", False, 1, "2026-01-01 00:00:00"),
            (5, "_shared", "ds", "3.0.0", False, 30, None),
            (6, "_shared", "shared-only", "1.0.0", False, 5, None),
        ]
        for pk, ws, dataset_id, version, pre, n, gone in rows:
            params = {"pk": pk, "ws": ws, "id": dataset_id, "v": version, "pre": pre, "n": n}
            conn.execute(text(_VERSION), {**params, "gone": gone})
    migrate(eng)
    ctx = local_admin_context(eng, Settings(home=tmp_path, database_url=empty_database_url))
    page = svc.list_datasets(ctx)
    listed = [(s.id, s.workspace, s.latest, s.versions, s.cases) for s in page.items]
    assert listed == [("ds", "default", "1.10.0", 3, 10), ("shared-only", "_shared", "1.0.0", 1, 5)]
    assert svc.get_dataset(ctx, "shared-only").version.workspace == "_shared"
    eng.dispose()


_DESCRIBED = (
    "INSERT INTO dataset_versions (pk, workspace, dataset_id, version, is_prerelease,"
    " description, tags, content_hash, case_count, created_by, created_at, deleted_at) VALUES"
    " (:pk, 'default', :id, :v, false, :about, :tags, 'h', 1, 't', CURRENT_TIMESTAMP, :gone)"
)
_HEAD = (
    "INSERT INTO dataset_heads (workspace, dataset_id, latest_pk, versions, case_count,"
    " updated_at, first_pk) VALUES ('default', :id, :pk, 1, 1, CURRENT_TIMESTAMP, :first)"
)
_TAG = (
    "INSERT INTO version_tags (workspace, dataset_id, tag, version_pk, set_by, set_at)"
    " VALUES ('default', :id, :tag, :pk, 't', CURRENT_TIMESTAMP)"
)


def test_the_search_text_is_backfilled_from_the_latest_version_and_live_version_tags(
    empty_database_url: str, tmp_path: Path
) -> None:
    """Migration 0013: a search finds the heads written before it by the latest's description
    and content tags and by the tags of live versions, and nothing else."""
    eng = make_engine(empty_database_url)
    command.upgrade(alembic_config(eng), "0012")
    with eng.begin() as conn:
        conn.execute(text(_WORKSPACE), {"ws": "default"})
        rows = [
            (1, "ds", "1.0.0", "Old words", '["stale"]', None),
            (2, "ds", "1.1.0", "Évaluation", '["Math", "b"]', None),
            (3, "ds", "2.0.0", "Gone words", '["gone"]', "2026-01-01 00:00:00"),
            (4, "other", "1.0.0", None, "[]", None),
        ]
        for pk, dataset_id, version, about, tags, gone in rows:
            params = {"pk": pk, "id": dataset_id, "v": version, "about": about, "tags": tags}
            conn.execute(text(_DESCRIBED), {**params, "gone": gone})
        conn.execute(text(_HEAD), {"id": "ds", "pk": 2, "first": 1})
        conn.execute(text(_HEAD), {"id": "other", "pk": 4, "first": 4})
        for dataset_id, tag, pk in (("ds", "Golden", 1), ("ds", "dropped", 3), ("other", "x", 4)):
            conn.execute(text(_TAG), {"id": dataset_id, "tag": tag, "pk": pk})
    migrate(eng)
    ctx = local_admin_context(eng, Settings(home=tmp_path, database_url=empty_database_url))

    def found(needle: str) -> list[str]:
        return [s.id for s in svc.list_datasets(ctx, search=needle).items]

    assert found("éVAL") == found("math") == found("golden") == ["ds"]
    assert found("old words") == found("stale") == found("gone") == found("dropped") == []
    assert found('math","b') == []  # never across two tags
    assert found("x") == ["other"]
    eng.dispose()
