"""Migration 0016 (issue 27): a secret stored before it has no hosts — listed with ``hosts: []``
and sent to no model endpoint (fail closed) — until it is set again with its hosts."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from sqlalchemy import text

from benchbook.services.context import local_admin_context
from benchbook.services.secrets import list_secrets, secret_records_for, set_secret
from benchbook.settings import Settings
from benchbook.store.engine import alembic_config, make_engine, migrate

_WORKSPACE = (
    "INSERT INTO workspaces (id, name, created_at) VALUES ('default', 'd', CURRENT_TIMESTAMP)"
)


def test_secrets_stored_before_hosts_existed_are_bound_to_no_host(
    empty_database_url: str, tmp_path: Path
) -> None:
    eng = make_engine(empty_database_url)
    settings = Settings(home=tmp_path, database_url=empty_database_url)
    command.upgrade(alembic_config(eng), "0015_version_sources")
    with eng.begin() as conn:
        conn.execute(text(_WORKSPACE))
    ctx = local_admin_context(eng, settings)
    # The value is written as 0015 stored it: ciphertext, no hosts column yet.
    from benchbook.services.secrets import _cipher

    token = _cipher(settings).encrypt(b"sk-old").decode()
    with eng.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO secrets (scope, owner, name, ciphertext, updated_by, updated_at)"
                " VALUES ('workspace', 'default', 'OLD_KEY', :c, 'admin', CURRENT_TIMESTAMP)"
            ),
            {"c": token},
        )
    migrate(eng)
    [info] = list_secrets(ctx, "workspace")
    assert (info.name, info.hosts) == ("OLD_KEY", [])
    found = secret_records_for(eng, settings, "someone", "default", ["OLD_KEY"])
    assert found == {"OLD_KEY": ("sk-old", [])}
    set_secret(ctx, "OLD_KEY", "sk-old", "workspace", hosts=["API.example.org"])
    assert list_secrets(ctx, "workspace")[0].hosts == ["api.example.org"]
    eng.dispose()
