"""API keys: shown once, stored hashed, scoped, last-used, revocable — on both backends."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from sqlalchemy import select, update

from benchbook.errors import Forbidden, InvalidInput, NotFound, Unauthenticated
from benchbook.services import accounts
from benchbook.services.auth import authenticate_api_key
from benchbook.services.context import Context
from benchbook.services.keys import create_api_key, list_api_keys, revoke_api_key
from benchbook.store.tables import api_keys
from tests.services.test_accounts import Team, make_team


@pytest.fixture
def team(ctx: Context) -> Team:
    """A fresh team on the backend under test."""
    return make_team(ctx)


def test_a_key_is_shown_once_and_only_its_hash_is_stored(team: Team) -> None:
    created = create_api_key(team.member, "laptop")
    assert created.key.startswith("bb_") and len(created.key) >= 40
    with team.root.engine.connect() as conn:
        row = conn.execute(select(api_keys).where(api_keys.c.id == created.info.id)).one()
    assert created.key not in (row.key_hash, row.prefix)
    assert created.key.startswith(row.prefix)
    listed = list_api_keys(team.member)
    assert created.info.id in {k.id for k in listed}
    assert all(created.key not in k.model_dump_json() for k in listed)


def test_a_key_authenticates_as_its_owner_with_min_of_scope_and_role(team: Team) -> None:
    engine = team.root.engine
    read_key = create_api_key(team.admin, "reader", "read").key
    write_key = create_api_key(team.admin, "writer", "write").key
    assert authenticate_api_key(engine, read_key).role == "viewer"
    assert authenticate_api_key(engine, write_key).role == "member"
    principal = authenticate_api_key(engine, create_api_key(team.admin, "root", "admin").key)
    assert (principal.user_id, principal.workspace, principal.role) == (
        team.admin.principal.user_id,
        team.ws,
        "admin",
    )
    member_key = create_api_key(team.member, "mine", "write").key
    accounts.set_member_role(team.admin, team.member.principal.user_id, "viewer")
    assert authenticate_api_key(engine, member_key).role == "viewer"


def test_a_scope_above_the_owners_role_is_rejected(team: Team) -> None:
    with pytest.raises(InvalidInput) as err:
        create_api_key(team.viewer, "too much", "write")
    assert err.value.details["errors"][0]["path"] == "scope"
    with pytest.raises(InvalidInput):
        create_api_key(team.member, " ", "read")
    assert [k.name for k in list_api_keys(team.viewer)] == ["test"]


def test_a_revoked_key_is_unauthenticated_on_its_next_use(team: Team) -> None:
    created = create_api_key(team.member, "ci")
    assert authenticate_api_key(team.root.engine, created.key).user_id == (
        team.member.principal.user_id
    )
    info = revoke_api_key(team.member, created.info.id)
    assert info.revoked_at is not None
    with pytest.raises(Unauthenticated):
        authenticate_api_key(team.root.engine, created.key)


def test_unknown_and_malformed_keys_are_unauthenticated(team: Team) -> None:
    key = create_api_key(team.member, "ci").key
    for bad in (
        key[:-1] + ("A" if key[-1] != "A" else "B"),
        "bb_",
        "sk-abc",
        key.replace("bb_", ""),
    ):
        with pytest.raises(Unauthenticated):
            authenticate_api_key(team.root.engine, bad)


def test_a_removed_members_keys_stop_working(team: Team) -> None:
    key = create_api_key(team.member2, "script").key
    accounts.remove_member(team.admin, team.member2.principal.user_id)
    with pytest.raises(Unauthenticated):
        authenticate_api_key(team.root.engine, key)


def test_last_used_is_recorded_at_most_once_a_minute(team: Team) -> None:
    created = create_api_key(team.member, "ci")
    engine = team.root.engine
    assert created.info.last_used_at is None
    authenticate_api_key(engine, created.key)
    first = next(k for k in list_api_keys(team.member) if k.id == created.info.id).last_used_at
    assert first is not None
    authenticate_api_key(engine, created.key)
    again = next(k for k in list_api_keys(team.member) if k.id == created.info.id).last_used_at
    assert again == first
    with engine.begin() as conn:
        conn.execute(
            update(api_keys)
            .where(api_keys.c.id == created.info.id)
            .values(last_used_at=first - timedelta(minutes=5))
        )
    authenticate_api_key(engine, created.key)
    later = next(k for k in list_api_keys(team.member) if k.id == created.info.id).last_used_at
    assert later is not None and later >= first


def test_only_admins_manage_other_members_keys(team: Team) -> None:
    mine = create_api_key(team.member, "mine")
    with pytest.raises(Forbidden):
        revoke_api_key(team.member2, mine.info.id)
    with pytest.raises(Forbidden):
        list_api_keys(team.member2, all_users=True)
    with pytest.raises(Forbidden):
        create_api_key(team.member2, "for someone", "read", user=team.member.principal.user_id)
    assert mine.info.id in {k.id for k in list_api_keys(team.admin, all_users=True)}
    assert revoke_api_key(team.admin, mine.info.id).revoked_at is not None
    for_member = create_api_key(team.admin, "issued", "read", user=team.member.principal.user_id)
    assert for_member.info.user_id == team.member.principal.user_id
    assert for_member.info.created_by == team.admin.principal.user_id


def test_a_key_of_another_workspace_is_not_found(team: Team) -> None:
    theirs = create_api_key(team.outsider, "theirs")
    with pytest.raises(NotFound):
        revoke_api_key(team.admin, theirs.info.id)
    assert theirs.info.id not in {k.id for k in list_api_keys(team.admin, all_users=True)}
    with pytest.raises(NotFound):
        create_api_key(team.admin, "x", "read", user=team.outsider.principal.user_id)


def test_a_fresh_key_authenticates_at_once_while_another_writer_holds_sqlite(
    team: Team, backend: str
) -> None:
    if backend != "sqlite":
        pytest.skip("PostgreSQL has row locks; the single-writer wait is SQLite's")
    key = create_api_key(team.root, "bot", "read", user=team.member.principal.user_id).key
    holder = team.root.engine.raw_connection()  # an import holding the writer
    try:
        holder.cursor().execute("BEGIN IMMEDIATE")
        started = time.monotonic()
        principal = authenticate_api_key(team.root.engine, key)
        elapsed = time.monotonic() - started
    finally:
        holder.rollback()
        holder.close()
    assert principal.role == "viewer"
    assert elapsed < 1.0, f"the last-use stamp waited {elapsed:.1f} s for the writer"
