"""Secrets: encrypted at rest, write-only, requester-first resolution — on both backends."""

from __future__ import annotations

import stat
from dataclasses import replace

import pytest
from sqlalchemy import select

from benchbook.errors import BenchbookError, Forbidden, InvalidInput, NotFound
from benchbook.services.context import Context
from benchbook.services.secrets import (
    delete_secret,
    installation_key,
    list_secrets,
    resolve_secret,
    set_secret,
)
from benchbook.store.tables import secrets
from tests.services.test_accounts import Team, make_team

TOKEN = "hf_user_token_0123456789"


@pytest.fixture
def team(ctx: Context) -> Team:
    """A fresh team on the backend under test."""
    return make_team(ctx)


def _stored(ctx: Context) -> list[str]:
    with ctx.engine.connect() as conn:
        return [str(v) for v in conn.scalars(select(secrets.c.ciphertext))]


def test_the_stored_column_is_not_the_plain_text(team: Team) -> None:
    set_secret(team.member, "HF_TOKEN", TOKEN)
    set_secret(team.admin, "HF_TOKEN", "hf_workspace_token", scope="workspace")
    stored = _stored(team.root)
    assert len(stored) == 2
    assert all(TOKEN not in s and "hf_workspace_token" not in s for s in stored)
    assert resolve_secret(team.member, "HF_TOKEN") == TOKEN


def test_a_list_returns_names_and_scopes_never_values(team: Team) -> None:
    set_secret(team.member, "HF_TOKEN", TOKEN)
    set_secret(team.admin, "OPENAI_API_KEY", "sk-workspace", scope="workspace")
    mine = list_secrets(team.member)
    assert [(s.name, s.scope) for s in mine] == [("HF_TOKEN", "user")]
    everything = list_secrets(team.admin)
    assert [(s.name, s.scope) for s in everything] == [("OPENAI_API_KEY", "workspace")]
    dumped = "".join(s.model_dump_json() for s in mine + everything)
    assert TOKEN not in dumped and "sk-workspace" not in dumped


def test_the_requesters_own_secret_wins_over_the_workspaces(team: Team) -> None:
    set_secret(team.admin, "HF_TOKEN", "hf_workspace_token", scope="workspace")
    set_secret(team.member, "HF_TOKEN", TOKEN)
    assert resolve_secret(team.member, "HF_TOKEN") == TOKEN
    assert resolve_secret(team.member2, "HF_TOKEN") == "hf_workspace_token"
    assert resolve_secret(team.outsider, "HF_TOKEN") is None
    delete_secret(team.member, "HF_TOKEN")
    assert resolve_secret(team.member, "HF_TOKEN") == "hf_workspace_token"


def test_setting_again_replaces_the_value(team: Team) -> None:
    set_secret(team.member, "HF_TOKEN", "first")
    set_secret(team.member, "HF_TOKEN", "second")
    assert resolve_secret(team.member, "HF_TOKEN") == "second"
    assert len(_stored(team.root)) == 1


def test_workspace_secrets_are_for_admins_and_user_secrets_for_every_member(team: Team) -> None:
    with pytest.raises(Forbidden):
        set_secret(team.member, "HF_TOKEN", TOKEN, scope="workspace")
    with pytest.raises(Forbidden):
        list_secrets(team.member, scope="workspace")
    with pytest.raises(Forbidden):
        delete_secret(team.member, "HF_TOKEN", scope="workspace")
    assert set_secret(team.viewer, "HF_TOKEN", TOKEN).scope == "user"
    assert _stored(team.root) and len(_stored(team.root)) == 1


def test_workspace_secrets_stay_in_their_workspace(team: Team) -> None:
    set_secret(team.outsider, "HF_TOKEN", "theirs", scope="workspace")
    assert resolve_secret(team.admin, "HF_TOKEN") is None
    assert list_secrets(team.admin) == []
    with pytest.raises(NotFound):
        delete_secret(team.admin, "HF_TOKEN", scope="workspace")
    assert resolve_secret(team.outsider, "HF_TOKEN") == "theirs"


def test_bad_names_and_values_are_rejected_and_nothing_is_stored(team: Team) -> None:
    for name, value, path in (
        ("1BAD", "x", "name"),
        ("HF TOKEN", "x", "name"),
        ("OK", "", "value"),
    ):
        with pytest.raises(InvalidInput) as err:
            set_secret(team.member, name, value)
        assert err.value.details["errors"][0]["path"] == path
    with pytest.raises(InvalidInput):
        set_secret(team.member, "BIG", "x" * (64 * 1024 + 1))
    assert _stored(team.root) == []


def test_without_a_configured_key_one_is_generated_once_into_home(team: Team) -> None:
    settings = team.member.settings
    assert settings.secret_key is None
    set_secret(team.member, "HF_TOKEN", TOKEN)
    path = settings.home / "secret.key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert installation_key(settings) == path.read_text().strip()
    assert resolve_secret(team.member, "HF_TOKEN") == TOKEN


def test_a_changed_installation_key_is_a_409_saying_to_set_the_secret_again(team: Team) -> None:
    set_secret(team.member, "HF_TOKEN", TOKEN)
    other = replace(
        team.member, settings=team.member.settings.model_copy(update={"secret_key": "x"})
    )
    with pytest.raises(BenchbookError) as err:
        resolve_secret(other, "HF_TOKEN")
    assert "cannot be decrypted" in err.value.message
    assert err.value.http_status == 409  # was a bare BenchbookError: HTTP 500
    assert "set it again" in err.value.message
