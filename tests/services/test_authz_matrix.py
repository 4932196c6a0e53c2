"""The authorization matrix at the service level: role × operation × (own workspace, other
workspace, ``_shared``), with principals from real API keys, on both backends.

Outcomes follow SPEC C's order: action gate (403) → load (404) → ownership (403). Each role's
walk collects every outcome and compares the whole table at once, so a failure shows every
mismatching cell.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from benchbook.contracts import Dataset
from benchbook.errors import BenchbookError
from benchbook.services import datasets as svc
from benchbook.services.comments import create_comment, list_comments
from benchbook.services.context import Context
from tests.services.test_accounts import Team, make_team

OK, FORBIDDEN, NOT_FOUND = "ok", "forbidden", "not_found"
TARGETS = {"own": "ds", "other": "theirs", "shared": "pub"}


def _dataset(dataset_id: str, version: str = "1.0.0") -> Dataset:
    case = {"id": "a", "env": {"kind": "prompt"}, "task": f"{dataset_id} {version}"}
    return Dataset.model_validate({"id": dataset_id, "version": version, "cases": [case]})


@pytest.fixture
def team(ctx: Context) -> Team:
    """``ds`` 1.0.0 by the admin and 1.1.0 by the member in ``ws``; ``theirs`` in ``other``;
    ``pub`` in ``_shared``."""
    team = make_team(ctx)
    svc.register_dataset(team.admin, _dataset("ds", "1.0.0"))
    svc.register_dataset(team.member, _dataset("ds", "1.1.0"))
    svc.register_dataset(team.outsider, _dataset("theirs"))
    svc.register_dataset(ctx, _dataset("pub"), shared=True)
    return team


def _outcome(call: Callable[[], Any]) -> str:
    try:
        result = call()
        if hasattr(result, "__next__"):
            b"".join(result)
    except BenchbookError as exc:
        return exc.code
    return OK


def _listed(ctx: Context, dataset_id: str) -> str:
    return OK if dataset_id in {s.id for s in svc.list_datasets(ctx).items} else NOT_FOUND


READS: dict[str, Callable[[Context, str], Any]] = {
    "list_datasets": _listed,
    "get_dataset": lambda c, d: svc.get_dataset(c, d, "latest"),
    "get_case": lambda c, d: svc.get_case(c, d, "latest", "a"),
    "export_dataset": lambda c, d: svc.export_dataset(c, d, "latest"),
    "list_dataset_versions": svc.list_dataset_versions,
    "diff_datasets": lambda c, d: svc.diff_datasets(c, d, "1.0.0", "latest"),
    "get_dataset_activity": svc.get_dataset_activity,
    "list_comments": lambda c, d: list_comments(c, "dataset", d),
}
WRITES: dict[str, Callable[[Context, str], Any]] = {
    "set_dataset_version_tags": lambda c, d: svc.set_dataset_version_tags(c, d, "1.0.0", ["prod"]),
    "create_comment": lambda c, d: create_comment(c, "dataset", d, "hi"),
    "delete_dataset_version": lambda c, d: svc.delete_dataset_version(c, d, "1.0.0"),
}


def _walk(ctx: Context) -> dict[tuple[str, str], str]:
    table: dict[tuple[str, str], str] = {}
    for name, op in READS.items():
        for target, dataset_id in TARGETS.items():
            outcome = op(ctx, dataset_id) if name == "list_datasets" else None
            table[name, target] = outcome or _outcome(lambda: op(ctx, dataset_id))  # noqa: B023
    table["register_dataset", "own"] = _outcome(
        lambda: svc.register_dataset(ctx, _dataset("fresh"))
    )
    table["register_dataset", "shared"] = _outcome(
        lambda: svc.register_dataset(ctx, _dataset("fresh-pub"), shared=True)
    )
    for name, op in WRITES.items():
        for target, dataset_id in TARGETS.items():
            table[name, target] = _outcome(lambda: op(ctx, dataset_id))  # noqa: B023
    return table


def _expected(role: str) -> dict[tuple[str, str], str]:
    table = {}
    for name in READS:
        table |= {(name, "own"): OK, (name, "other"): NOT_FOUND, (name, "shared"): OK}
    gate = FORBIDDEN if role == "viewer" else None
    table["register_dataset", "own"] = gate or OK
    table["register_dataset", "shared"] = FORBIDDEN  # only installation admins publish
    table |= {
        ("set_dataset_version_tags", "own"): gate or OK,
        ("set_dataset_version_tags", "other"): gate or NOT_FOUND,
        ("set_dataset_version_tags", "shared"): gate or NOT_FOUND,
        ("create_comment", "own"): gate or OK,
        ("create_comment", "other"): gate or NOT_FOUND,
        ("create_comment", "shared"): gate or OK,
        # 1.0.0 of ds was created by the admin: members and viewers fail the ownership check.
        ("delete_dataset_version", "own"): OK if role == "admin" else FORBIDDEN,
        ("delete_dataset_version", "other"): gate or NOT_FOUND,
        ("delete_dataset_version", "shared"): gate or NOT_FOUND,
    }
    return table


@pytest.mark.parametrize("role", ["viewer", "member", "admin"])
def test_every_operation_has_the_expected_outcome_for_each_role_and_workspace(
    team: Team, role: str
) -> None:
    ctx: Context = getattr(team, role)
    assert _walk(ctx) == _expected(role)


def test_an_installation_admin_publishes_into_shared(team: Team, ctx: Context) -> None:
    assert _outcome(lambda: svc.register_dataset(ctx, _dataset("fresh-pub"), shared=True)) == OK
    assert _listed(team.viewer, "fresh-pub") == OK


def _live(ctx: Context, dataset_id: str = "ds") -> list[str]:
    return sorted(v.version for v in svc.list_dataset_versions(ctx, dataset_id))


def test_a_member_deletes_their_own_version_but_not_anothers(team: Team) -> None:
    assert _outcome(lambda: svc.delete_dataset_version(team.member, "ds", "1.0.0")) == FORBIDDEN
    assert svc.delete_dataset_version(team.member, "ds", "1.1.0").deleted == ["1.1.0"]
    assert _live(team.viewer) == ["1.0.0"]


def test_a_viewer_cannot_delete_even_through_the_creator_path(team: Team) -> None:
    assert _outcome(lambda: svc.delete_dataset_versions(team.viewer, "ds")) == FORBIDDEN
    assert _live(team.viewer) == ["1.0.0", "1.1.0"]


def test_a_creator_demoted_to_viewer_can_no_longer_delete_their_version(team: Team) -> None:
    svc.register_dataset(team.member, _dataset("mine"))
    demoted = Context(
        principal=replace(team.member.principal, role="viewer"),
        engine=team.member.engine,
        settings=team.member.settings,
    )
    assert _outcome(lambda: svc.delete_dataset_version(demoted, "mine", "1.0.0")) == FORBIDDEN
    assert [v.version for v in svc.list_dataset_versions(team.admin, "mine")] == ["1.0.0"]


def test_an_admin_deletes_any_version_in_the_workspace(team: Team) -> None:
    assert svc.delete_dataset_versions(team.admin, "ds").deleted == ["1.0.0", "1.1.0"]
    assert _outcome(lambda: _live(team.viewer)) == NOT_FOUND


def test_a_bulk_delete_with_one_forbidden_version_deletes_nothing(team: Team) -> None:
    svc.register_dataset(team.member, _dataset("ds", "1.2.0"))
    outcome = _outcome(
        lambda: svc.delete_dataset_versions(team.member, "ds", ["1.1.0", "1.0.0", "1.2.0"])
    )
    assert outcome == FORBIDDEN
    assert _live(team.admin) == ["1.0.0", "1.1.0", "1.2.0"]
    assert _outcome(lambda: svc.delete_dataset_versions(team.member, "ds")) == FORBIDDEN
    assert _live(team.admin) == ["1.0.0", "1.1.0", "1.2.0"]


def test_a_bulk_delete_with_one_missing_version_deletes_nothing(team: Team) -> None:
    outcome = _outcome(lambda: svc.delete_dataset_versions(team.admin, "ds", ["1.0.0", "9.9.9"]))
    assert outcome == NOT_FOUND
    assert _live(team.admin) == ["1.0.0", "1.1.0"]


def test_another_workspaces_dataset_is_invisible_to_every_role(team: Team) -> None:
    for ctx in (team.viewer, team.member, team.admin):
        assert "theirs" not in {s.id for s in svc.list_datasets(ctx).items}
        # A viewer is stopped by the write gate before anything is loaded (SPEC C order).
        hidden = FORBIDDEN if ctx is team.viewer else NOT_FOUND
        assert _outcome(lambda: svc.delete_dataset_versions(ctx, "theirs")) == hidden  # noqa: B023
    assert _live(team.outsider, "theirs") == ["1.0.0"]
