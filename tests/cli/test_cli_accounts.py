"""``benchbook users set-password``: recovering a lost password from the terminal."""

from __future__ import annotations

import orjson
import pytest
from sqlalchemy import Engine

from benchbook.errors import Unauthenticated
from benchbook.services import accounts
from benchbook.services.auth import authenticate_password, authenticate_session, start_session
from benchbook.services.context import Context
from tests.cli.conftest import invoke


def test_set_password_replaces_a_lost_admin_password_and_ends_their_sessions(
    cli_env: dict[str, str], engine: Engine, ctx: Context
) -> None:
    accounts.create_user(ctx, "ada@example.org", "Ada", "forgotten-pass", installation_admin=True)
    accounts.add_member(ctx, "ada@example.org", "admin")
    session = start_session(
        engine, authenticate_password(engine, "ada@example.org", "forgotten-pass")
    )
    result = invoke(
        cli_env,
        "users",
        "set-password",
        "--email",
        "ADA@example.org",
        "--password",
        "brand-new-pass",
    )
    assert result.exit_code == 0, result.output
    assert "ada@example.org" in result.stdout
    assert authenticate_password(engine, "ada@example.org", "brand-new-pass").role == "admin"
    with pytest.raises(Unauthenticated):
        authenticate_password(engine, "ada@example.org", "forgotten-pass")
    with pytest.raises(Unauthenticated):
        authenticate_session(engine, session)


def test_set_password_refuses_a_short_password_and_an_unknown_user(
    cli_env: dict[str, str], ctx: Context
) -> None:
    accounts.create_user(ctx, "ada@example.org", "Ada", "forgotten-pass")
    short = invoke(
        cli_env, "users", "set-password", "--email", "ada@example.org", "--password", "x"
    )
    assert short.exit_code == 1 and "password" in short.stderr
    unknown = invoke(
        cli_env,
        "users",
        "set-password",
        "--email",
        "nobody@example.org",
        "--password",
        "long-enough",
    )
    assert unknown.exit_code == 1 and "not found" in unknown.stderr


def test_member_key_and_secret_commands_print_json_when_asked(
    cli_env: dict[str, str], ctx: Context
) -> None:
    accounts.create_user(ctx, "ada@example.org", "Ada", "a-long-password")
    accounts.create_user(ctx, "bo@example.org", "Bo", "a-long-password")
    accounts.add_member(ctx, "bo@example.org", "admin")  # the workspace keeps an admin

    def as_json(*args: str) -> object:
        result = invoke(cli_env, *args, "--json")
        assert result.exit_code == 0, result.output
        return orjson.loads(result.stdout)

    added = as_json("members", "add", "ada@example.org", "--role", "admin")
    assert isinstance(added, dict) and (added["email"], added["role"]) == (
        "ada@example.org",
        "admin",
    )
    changed = as_json("members", "set-role", "ada@example.org", "member")
    assert isinstance(changed, dict) and changed["role"] == "member"
    made = as_json("keys", "create", "--name", "ci", "--user", "ada@example.org", "--scope", "read")
    assert isinstance(made, dict)
    revoked = as_json("keys", "revoke", made["info"]["id"])
    assert isinstance(revoked, dict) and revoked["revoked_at"] is not None
    stored = as_json("secrets", "set", "HF_TOKEN", "--value", "hf_x")
    assert isinstance(stored, dict) and stored["name"] == "HF_TOKEN" and "hf_x" not in str(stored)
    assert as_json("secrets", "delete", "HF_TOKEN") == {
        "deleted": "HF_TOKEN",
        "workspace": "default",
    }
    assert as_json("members", "remove", "ada@example.org") == {
        "removed": "ada@example.org",
        "workspace": "default",
    }
