"""Users, workspaces, members and password login through the services, on both backends.

``make_team`` builds a real team (users with argon2 passwords, memberships) whose contexts come
from ``authenticate_password``, so every test here also exercises the login path.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import pytest
from sqlalchemy import Engine, select

from benchbook.contracts.accounts import KeyScope
from benchbook.errors import Conflict, Forbidden, InvalidInput, NotFound, Unauthenticated
from benchbook.services import accounts as svc
from benchbook.services.auth import (
    authenticate_api_key,
    authenticate_password,
    authenticate_session,
    check_csrf,
    csrf_token,
    end_session,
    start_session,
)
from benchbook.services.context import Context
from benchbook.services.keys import create_api_key
from benchbook.settings import Settings
from benchbook.store.tables import memberships, sessions, users

PASSWORD = "correct horse battery"


@dataclass
class Team:
    """A workspace ``ws`` with an admin, two members and a viewer; ``outsider`` administers
    another workspace ``other``. ``root`` is the local installation admin acting in ``ws``."""

    ws: str
    other: str
    root: Context
    admin: Context
    member: Context
    member2: Context
    viewer: Context
    outsider: Context


SCOPE_OF: dict[str, KeyScope] = {"viewer": "read", "member": "write", "admin": "admin"}


def keyed(root: Context, email: str, role: str) -> Context:
    """A context for ``email`` in ``root``'s workspace through a fresh API key of ``role``."""
    key = create_api_key(root, "test", SCOPE_OF[role], user=email).key
    principal = authenticate_api_key(root.engine, key)
    return Context(principal=principal, engine=root.engine, settings=root.settings)


def make_team(ctx: Context) -> Team:
    """Create two fresh workspaces and five users (unique names: PostgreSQL keeps workspaces).

    Contexts come from real API keys (argon2 costs ~0.15 s per hash, too slow for every test);
    password login has its own tests.
    """
    tag = uuid.uuid4().hex[:8]
    ws, other = f"team-{tag}", f"other-{tag}"
    svc.create_workspace(ctx, ws, "Team")
    svc.create_workspace(ctx, other, "Other")
    root, root_other = svc.in_workspace(ctx, ws), svc.in_workspace(ctx, other)
    roles = {"admin": "admin", "member": "member", "member2": "member", "viewer": "viewer"}
    people: dict[str, Context] = {}
    for name, role in roles.items():
        email = f"{name}-{tag}@example.org"
        svc.create_user(ctx, email, name.title())
        svc.add_member(root, email, role)  # type: ignore[arg-type]
        people[name] = keyed(root, email, role)
    svc.create_user(ctx, f"outsider-{tag}@example.org", "Outsider")
    svc.add_member(root_other, f"outsider-{tag}@example.org", "admin")
    outsider = keyed(root_other, f"outsider-{tag}@example.org", "admin")
    return Team(ws=ws, other=other, root=root, outsider=outsider, **people)


@pytest.fixture
def team(ctx: Context) -> Team:
    """A fresh team on the backend under test."""
    return make_team(ctx)


def test_key_principals_carry_the_membership_role_in_the_keys_workspace(team: Team) -> None:
    assert team.viewer.principal.role == "viewer"
    assert team.member.principal.role == "member"
    assert team.admin.principal.workspace == team.ws
    assert team.admin.principal.can_publish_shared is False


def test_a_wrong_password_and_an_unknown_email_fail_alike(ctx: Context) -> None:
    svc.create_user(ctx, "pat@example.org", "Pat", PASSWORD)
    svc.add_member(ctx, "pat@example.org", "viewer")
    assert authenticate_password(ctx.engine, "pat@example.org", PASSWORD).role == "viewer"
    with pytest.raises(Unauthenticated) as wrong:
        authenticate_password(ctx.engine, "pat@example.org", "not the password")
    with pytest.raises(Unauthenticated) as unknown:
        authenticate_password(ctx.engine, "nobody@example.org", PASSWORD)
    assert wrong.value.message == unknown.value.message


def test_emails_are_unique_case_insensitively_and_login_ignores_case(ctx: Context) -> None:
    svc.create_user(ctx, "Ada@Example.org", "Ada", PASSWORD)
    with pytest.raises(Conflict):
        svc.create_user(ctx, "ada@example.ORG", "Ada again", PASSWORD)
    svc.add_member(ctx, "ADA@example.org", "member")
    principal = authenticate_password(ctx.engine, "aDa@EXAMPLE.org", PASSWORD)
    assert principal.workspace == "default"
    assert principal.display_name == "Ada"


def test_the_stored_password_is_an_argon2_hash(ctx: Context) -> None:
    user = svc.create_user(ctx, "hash@example.org", "Hash", PASSWORD)
    with ctx.engine.connect() as conn:
        stored = conn.scalar(select(users.c.password_hash).where(users.c.id == user.id))
    assert stored is not None and stored.startswith("$argon2id$")
    assert PASSWORD not in stored


def test_bad_user_input_names_the_field_and_stores_nothing(ctx: Context) -> None:
    for email, password, field in (
        ("not-an-email", PASSWORD, "email"),
        ("short@example.org", "short", "password"),
    ):
        with pytest.raises(InvalidInput) as err:
            svc.create_user(ctx, email, "X", password)
        assert err.value.details["errors"][0]["path"] == field
    assert svc.list_users(ctx) == []


def test_only_installation_admins_create_users_and_workspaces(team: Team) -> None:
    with pytest.raises(Forbidden):
        svc.create_user(team.admin, "new@example.org", "New", PASSWORD)
    with pytest.raises(Forbidden):
        svc.create_workspace(team.admin, "mine")
    with pytest.raises(InvalidInput):
        svc.create_workspace(team.root, "_shared")
    with pytest.raises(Conflict):
        svc.create_workspace(team.root, team.ws)


def test_a_workspace_lists_its_members_and_admins_manage_them(team: Team) -> None:
    members = {m.display_name: m.role for m in svc.list_members(team.viewer)}
    assert members == {
        "Admin": "admin",
        "Member": "member",
        "Member2": "member",
        "Viewer": "viewer",
    }
    viewer_id = team.viewer.principal.user_id
    session = start_session(team.root.engine, team.viewer.principal)
    with pytest.raises(Forbidden):
        svc.set_member_role(team.member, viewer_id, "admin")
    assert svc.set_member_role(team.admin, viewer_id, "member").role == "member"
    assert authenticate_session(team.root.engine, session).role == "member"
    svc.remove_member(team.admin, viewer_id)
    with pytest.raises(Unauthenticated):
        authenticate_session(team.root.engine, session)
    with pytest.raises(NotFound):
        svc.remove_member(team.admin, viewer_id)


def test_a_workspace_never_loses_its_last_admin(team: Team) -> None:
    admin_id = team.admin.principal.user_id
    with pytest.raises(Conflict):
        svc.set_member_role(team.admin, admin_id, "member")
    with pytest.raises(Conflict):
        svc.remove_member(team.admin, admin_id)
    svc.set_member_role(team.admin, team.member.principal.user_id, "admin")
    svc.set_member_role(team.admin, admin_id, "viewer")
    roles = {m.user_id: m.role for m in svc.list_members(team.member)}
    assert roles[admin_id] == "viewer"


def test_members_of_another_workspace_are_not_listed(team: Team) -> None:
    assert [m.display_name for m in svc.list_members(team.outsider)] == ["Outsider"]
    assert team.outsider.principal.user_id not in {m.user_id for m in svc.list_members(team.admin)}


def test_adding_a_member_twice_or_an_unknown_user_fails(team: Team) -> None:
    with pytest.raises(Conflict):
        svc.add_member(team.admin, team.member.principal.user_id, "viewer")
    with pytest.raises(NotFound):
        svc.add_member(team.admin, "ghost@example.org", "viewer")
    with pytest.raises(InvalidInput):
        svc.add_member(team.admin, team.outsider.principal.user_id, "owner")  # type: ignore[arg-type]


def test_bootstrap_creates_one_admin_on_an_empty_database_only(engine: Engine) -> None:
    password = svc.bootstrap_admin(engine)
    assert password is not None and len(password) >= 12
    principal = authenticate_password(engine, svc.BOOTSTRAP_EMAIL, password)
    assert (principal.workspace, principal.role, principal.can_publish_shared) == (
        "default",
        "admin",
        True,
    )
    assert svc.bootstrap_admin(engine) is None
    with engine.connect() as conn:
        assert len(conn.execute(select(memberships)).all()) == 1


def test_a_session_authenticates_until_logout(team: Team, settings: Settings) -> None:
    engine = team.root.engine
    token = start_session(engine, team.member.principal)
    assert authenticate_session(engine, token) == team.member.principal
    with engine.connect() as conn:
        stored = conn.scalars(select(sessions.c.token_hash)).all()
    assert token not in stored
    end_session(engine, token)
    with pytest.raises(Unauthenticated):
        authenticate_session(engine, token)


def test_an_expired_session_or_a_removed_member_is_unauthenticated(team: Team) -> None:
    from datetime import timedelta

    engine = team.root.engine
    expired = start_session(engine, team.member.principal, ttl=timedelta(seconds=-1))
    with pytest.raises(Unauthenticated):
        authenticate_session(engine, expired)
    live = start_session(engine, team.viewer.principal)
    svc.remove_member(team.admin, team.viewer.principal.user_id)
    with pytest.raises(Unauthenticated):
        authenticate_session(engine, live)


def test_a_csrf_token_is_bound_to_its_session(settings: Settings) -> None:
    token = csrf_token(settings, "bbs_one")
    assert check_csrf(settings, "bbs_one", token)
    assert not check_csrf(settings, "bbs_two", token)
    assert not check_csrf(settings, "bbs_one", token[:-1] + ("1" if token.endswith("0") else "0"))


def test_a_user_lists_only_their_own_workspaces(team: Team) -> None:
    assert [w.id for w in svc.list_workspaces(team.member)] == [team.ws]
    everything = {w.id for w in svc.list_workspaces(team.root)}
    assert {team.ws, team.other, "default"} <= everything and "_shared" not in everything
