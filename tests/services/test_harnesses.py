"""Harness registry through the service (SPEC H.1), on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import pytest

from benchbook.errors import Conflict, Forbidden, InvalidInput, NotFound
from benchbook.services import harnesses as svc
from benchbook.services.context import Context
from tests.services.test_accounts import Team, make_team


def body(version: str = "1.0.0", **changes: Any) -> dict[str, Any]:
    """A command harness ``echoer`` answering its task."""
    harness: dict[str, Any] = {
        "id": "echoer",
        "version": version,
        "description": "Echoes",
        "kind": "command",
        "config": {"argv": ["/bin/echo", "{task}"]},
    }
    harness.update(changes)
    return harness


def register(ctx: Context, payload: dict[str, Any], shared: bool = False) -> Any:
    return svc.register_harness(ctx, svc.parse_harness(payload), shared)


def test_registering_the_identical_harness_again_changes_nothing(ctx: Context) -> None:
    first = register(ctx, body())
    spelled = body(config={"argv": ["/bin/echo", "{task}"], "answer": "stdout", "env": {}})
    again = register(ctx, dict(reversed(list(spelled.items()))))
    assert (first.created, again.created) == (True, False)
    assert first.content_hash == again.content_hash


def test_different_content_at_the_same_version_is_a_conflict_naming_it(ctx: Context) -> None:
    register(ctx, body())
    with pytest.raises(Conflict, match=r"echoer@1\.0\.0"):
        register(ctx, body(description="changed"))
    assert svc.get_harness(ctx, "echoer", "1.0.0").description == "Echoes"


def test_latest_is_the_highest_release_and_a_tombstone_hides_a_version(ctx: Context) -> None:
    for version in ("1.2.0", "1.10.0", "1.9.0", "2.0.0-rc.1"):
        register(ctx, body(version))
    assert svc.get_harness(ctx, "echoer").version == "1.10.0"
    svc.delete_harness_version(ctx, "echoer", "1.10.0")
    assert svc.get_harness(ctx, "echoer").version == "1.9.0"
    with pytest.raises(NotFound):
        svc.get_harness(ctx, "echoer", "1.10.0")
    assert register(ctx, body("1.10.0")).created  # identical content revives it
    assert svc.get_harness(ctx, "echoer").version == "1.10.0"


def test_a_shared_harness_shows_until_the_workspace_registers_its_own_id(ctx: Context) -> None:
    register(ctx, body(description="shared one"), shared=True)
    team = make_team(ctx)
    assert svc.get_harness(team.viewer, "echoer").description == "shared one"
    register(team.admin, body("0.1.0", description="own one"))
    listed = svc.list_harnesses(team.viewer)
    assert [(h.workspace, h.latest) for h in listed] == [(team.ws, "0.1.0")]


def test_only_admins_register_harnesses_and_viewers_read_them(ctx: Context) -> None:
    team: Team = make_team(ctx)
    for who in (team.member, team.viewer):
        with pytest.raises(Forbidden):
            register(who, body())
    register(team.admin, body())
    assert svc.get_harness(team.viewer, "echoer").id == "echoer"
    with pytest.raises(NotFound):
        svc.get_harness(team.outsider, "echoer")


def test_a_python_harness_needs_an_installation_admin(ctx: Context) -> None:
    team = make_team(ctx)
    payload = body(kind="python", config={"callable": "tests.eval.harnesses.agents:add"})
    with pytest.raises(Forbidden, match="installation admins"):
        register(team.admin, payload)
    assert register(ctx, payload).created


@pytest.mark.parametrize(
    ("config", "where"),
    [
        ({"argv": ["/bin/echo", "{answer}"]}, "config.argv"),
        ({"argv": ["/bin/echo"], "env": {"X": "{expected}"}}, "config.env"),
    ],
)
def test_an_unknown_template_field_is_rejected_naming_where(
    ctx: Context, config: dict[str, Any], where: str
) -> None:
    with pytest.raises(InvalidInput, match=where):
        svc.parse_harness(body(config=config))
    assert svc.list_harnesses(ctx) == []


def test_a_harness_without_a_known_kind_is_rejected_listing_the_kinds() -> None:
    with pytest.raises(InvalidInput, match="command, openai, python"):
        svc.parse_harness(body(kind="shell"))


AGENT_CONFIG = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "max_steps": 5}


def test_an_agent_harness_is_registered_by_admins_and_shared_with_its_defaults(
    ctx: Context,
) -> None:
    team = make_team(ctx)
    payload = body(kind="agent", config=AGENT_CONFIG)
    with pytest.raises(Forbidden):
        register(team.member, payload)
    assert register(team.admin, payload).created
    register(ctx, body("2.0.0", kind="agent", config=AGENT_CONFIG), shared=True)
    stored = svc.get_harness(team.viewer, "echoer")
    assert stored.kind == "agent" and stored.version == "1.0.0"
    assert stored.config.tools == [  # type: ignore[union-attr]
        "bash", "python", "read_file", "write_file", "edit_file", "list_dir", "submit",
    ]  # fmt: skip
    assert (stored.config.tool_timeout_s, stored.config.network) == (120, "none")  # type: ignore[union-attr]
    assert svc.get_harness(ctx, "echoer").kind == "agent"  # the _shared one, seen from default


@pytest.mark.parametrize(
    ("config", "where"),
    [
        ({**AGENT_CONFIG, "tools": ["bash"]}, "must include 'submit'"),
        ({**AGENT_CONFIG, "tools": ["submit", "submit"]}, "each tool may be named once"),
        ({**AGENT_CONFIG, "tools": ["submit", "shell"]}, "config.tools.1"),
        ({**AGENT_CONFIG, "max_step": 3}, "config.max_step"),
        ({"base_url": "http://127.0.0.1:9/v1", "model": "m"}, "config.max_steps"),
        ({**AGENT_CONFIG, "max_steps": 0}, "config.max_steps"),
        ({**AGENT_CONFIG, "base_url": "file:///etc"}, "config.base_url"),
        ({**AGENT_CONFIG, "network": "host"}, "config.network"),
    ],
)
def test_a_bad_agent_config_is_refused_naming_the_field(
    ctx: Context, config: dict[str, Any], where: str
) -> None:
    with pytest.raises(InvalidInput) as raised:
        svc.parse_harness(body(kind="agent", config=config))
    assert where in str(raised.value.details) or where in raised.value.message
    assert svc.list_harnesses(ctx) == []
