"""Issue 32: every API request authenticates its key, so the look-up is one statement (the key,
its user and the owner's role), outside a transaction — on both backends, with the same
answers as before for a revoked key and a key whose owner left the workspace."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import event

from benchbook.errors import Unauthenticated
from benchbook.services import accounts, keys
from benchbook.services.auth import authenticate_api_key
from benchbook.services.context import Context


def _statements(ctx: Context) -> list[str]:
    seen: list[str] = []

    def count(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        seen.append(statement)

    event.listen(ctx.engine, "before_cursor_execute", count)
    return seen


def test_an_api_key_is_authenticated_in_one_statement(ctx: Context) -> None:
    accounts.create_user(ctx, "m@example.org", "M")
    accounts.add_member(ctx, "m@example.org", "member")
    key = keys.create_api_key(ctx, "k", "write", user="m@example.org").key
    first = authenticate_api_key(ctx.engine, key)  # records the key's first use
    seen = _statements(ctx)
    again = authenticate_api_key(ctx.engine, key)
    assert len(seen) == 1, seen
    assert again == first
    assert (again.role, again.workspace) == ("member", "default")


def test_revoked_keys_and_departed_owners_are_still_refused(ctx: Context) -> None:
    accounts.create_user(ctx, "m@example.org", "M")
    accounts.add_member(ctx, "m@example.org", "member")
    revoked = keys.create_api_key(ctx, "a", "write", user="m@example.org")
    kept = keys.create_api_key(ctx, "b", "read", user="m@example.org").key
    keys.revoke_api_key(ctx, revoked.info.id)
    with pytest.raises(Unauthenticated):
        authenticate_api_key(ctx.engine, revoked.key)
    assert authenticate_api_key(ctx.engine, kept).role == "viewer"
    accounts.remove_member(ctx, "m@example.org")
    with pytest.raises(Unauthenticated):
        authenticate_api_key(ctx.engine, kept)
    with pytest.raises(Unauthenticated):
        authenticate_api_key(ctx.engine, "bb_unknown")
