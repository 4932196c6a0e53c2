"""Comments on datasets and the dataset activity timeline — on both backends."""

from __future__ import annotations

from dataclasses import replace

import pytest

from benchbook.contracts import Dataset
from benchbook.errors import Forbidden, InvalidInput, NotFound
from benchbook.services import datasets
from benchbook.services.comments import create_comment, delete_comment, list_comments
from benchbook.services.context import Context
from tests.services.test_accounts import Team, make_team


@pytest.fixture
def team(ctx: Context) -> Team:
    """A fresh team with dataset ``ds`` in ``ws``, ``theirs`` in ``other`` and ``pub`` shared."""
    team = make_team(ctx)
    datasets.register_dataset(team.member, _dataset("ds"))
    datasets.register_dataset(team.outsider, _dataset("theirs"))
    datasets.register_dataset(ctx, _dataset("pub"), shared=True)
    return team


def _dataset(dataset_id: str, version: str = "1.0.0") -> Dataset:
    case = {"id": "a", "env": {"kind": "prompt"}, "task": "2+2?"}
    return Dataset.model_validate({"id": dataset_id, "version": version, "cases": [case]})


def _bodies(ctx: Context, dataset_id: str = "ds") -> list[str]:
    return [c.body for c in list_comments(ctx, "dataset", dataset_id)]


def test_comments_are_listed_oldest_first_with_trimmed_bodies(team: Team) -> None:
    first = create_comment(team.member, "dataset", "ds", "  looks good  ")
    create_comment(team.admin, "dataset", "ds", "agreed")
    reply = create_comment(team.member2, "dataset", "ds", "why?", parent_id=first.id)
    assert _bodies(team.viewer) == ["looks good", "agreed", "why?"]
    listed = list_comments(team.viewer, "dataset", "ds")
    assert listed[2].parent_id == first.id and listed[2].id == reply.id
    assert (listed[0].workspace, listed[0].author) == (team.ws, team.member.principal.user_id)


def test_a_body_must_hold_1_to_10000_characters_after_trim(team: Team) -> None:
    for body in ("", "   \n\t", "x" * 10_001):
        with pytest.raises(InvalidInput) as err:
            create_comment(team.member, "dataset", "ds", body)
        assert err.value.details["errors"][0]["path"] == "body"
    assert (
        create_comment(team.member, "dataset", "ds", " " + "x" * 10_000 + " ").body == "x" * 10_000
    )
    assert len(_bodies(team.member)) == 1


def test_a_reply_needs_a_parent_on_the_same_resource(team: Team) -> None:
    on_pub = create_comment(team.member, "dataset", "pub", "shared note")
    with pytest.raises(NotFound) as err:
        create_comment(team.member, "dataset", "ds", "reply", parent_id=on_pub.id)
    assert err.value.details["errors"][0]["path"] == "parent_id"
    with pytest.raises(NotFound):
        create_comment(team.member, "dataset", "ds", "reply", parent_id=999_999)
    assert _bodies(team.member) == []


def test_a_viewer_cannot_comment_but_reads_comments(team: Team) -> None:
    create_comment(team.member, "dataset", "ds", "hello")
    with pytest.raises(Forbidden):
        create_comment(team.viewer, "dataset", "ds", "me too")
    assert _bodies(team.viewer) == ["hello"]


def test_the_author_or_an_admin_deletes_and_others_are_forbidden(team: Team) -> None:
    mine = create_comment(team.member, "dataset", "ds", "mine")
    other = create_comment(team.member2, "dataset", "ds", "other")
    with pytest.raises(Forbidden):
        delete_comment(team.member, other.id)
    with pytest.raises(Forbidden):
        delete_comment(team.viewer, mine.id)
    delete_comment(team.member, mine.id)
    delete_comment(team.admin, other.id)
    assert _bodies(team.member) == []
    with pytest.raises(NotFound):
        delete_comment(team.member, mine.id)


def test_an_author_demoted_to_viewer_can_no_longer_delete_their_comment(team: Team) -> None:
    mine = create_comment(team.member, "dataset", "ds", "mine")
    demoted = Context(
        principal=replace(team.member.principal, role="viewer"),
        engine=team.member.engine,
        settings=team.member.settings,
    )
    with pytest.raises(Forbidden):
        delete_comment(demoted, mine.id)
    assert _bodies(team.member) == ["mine"]


def test_deleting_a_comment_removes_its_replies(team: Team) -> None:
    root = create_comment(team.member, "dataset", "ds", "root")
    reply = create_comment(team.member2, "dataset", "ds", "reply", parent_id=root.id)
    create_comment(team.member, "dataset", "ds", "deeper", parent_id=reply.id)
    create_comment(team.member, "dataset", "ds", "unrelated")
    delete_comment(team.member, root.id)
    assert _bodies(team.member) == ["unrelated"]


def test_another_workspaces_comments_and_datasets_are_not_found(team: Team) -> None:
    theirs = create_comment(team.outsider, "dataset", "theirs", "private")
    for call in (
        lambda: list_comments(team.admin, "dataset", "theirs"),
        lambda: create_comment(team.admin, "dataset", "theirs", "peek"),
        lambda: delete_comment(team.admin, theirs.id),
        lambda: create_comment(team.admin, "dataset", "nope", "ghost"),
    ):
        with pytest.raises(NotFound):
            call()
    assert _bodies(team.outsider, "theirs") == ["private"]


def test_comments_on_a_shared_dataset_stay_in_the_commenters_workspace(team: Team) -> None:
    create_comment(team.member, "dataset", "pub", "ours")
    create_comment(team.outsider, "dataset", "pub", "theirs")
    assert _bodies(team.viewer, "pub") == ["ours"]
    assert _bodies(team.outsider, "pub") == ["theirs"]


def test_an_unknown_resource_type_is_invalid_input(team: Team) -> None:
    with pytest.raises(InvalidInput):
        create_comment(team.member, "planet", "ds", "hi")  # type: ignore[arg-type]


def test_the_activity_merges_events_and_comments_newest_first(team: Team) -> None:
    note = create_comment(team.member, "dataset", "ds", "first look")
    datasets.register_dataset(team.member, _dataset("ds", "1.1.0"))
    datasets.set_dataset_version_tags(team.member, "ds", "1.1.0", ["baseline"])
    create_comment(team.admin, "dataset", "ds", "ship it", parent_id=note.id)
    items = datasets.get_dataset_activity(team.viewer, "ds").items
    assert [i.kind for i in items] == ["comment", "tagged", "registered", "comment", "registered"]
    assert items[0].details["body"] == "ship it" and items[0].details["parent_id"] == note.id
    assert items[0].actor == team.admin.principal.user_id
    assert [i.at for i in items] == sorted((i.at for i in items), reverse=True)


def test_the_activity_pages_through_every_item_once(team: Team) -> None:
    for n in range(5):
        create_comment(team.member, "dataset", "ds", f"note {n}")
        datasets.register_dataset(team.member, _dataset("ds", f"1.{n + 1}.0"))
    whole = datasets.get_dataset_activity(team.member, "ds", limit=100).items
    seen, before = [], None
    while True:
        page = datasets.get_dataset_activity(team.member, "ds", before=before, limit=3)
        seen.extend(page.items)
        if page.next_before is None:
            break
        before = page.next_before
    assert len(whole) == 11
    assert [i.cursor for i in seen] == [i.cursor for i in whole]


def test_deleted_comments_leave_the_activity_and_their_cursor_still_pages(team: Team) -> None:
    keep = create_comment(team.member, "dataset", "ds", "keep")
    gone = create_comment(team.member, "dataset", "ds", "gone")
    page = datasets.get_dataset_activity(team.member, "ds", limit=1)
    assert page.items[0].details["comment_id"] == gone.id and page.next_before is not None
    delete_comment(team.member, gone.id)
    rest = datasets.get_dataset_activity(team.member, "ds", before=page.next_before).items
    assert [i.details.get("comment_id") for i in rest] == [keep.id, None]
    assert "gone" not in [
        i.details.get("body") for i in datasets.get_dataset_activity(team.member, "ds").items
    ]


def test_another_workspaces_comments_stay_out_of_a_shared_datasets_activity(team: Team) -> None:
    create_comment(team.outsider, "dataset", "pub", "theirs")
    kinds = [i.kind for i in datasets.get_dataset_activity(team.member, "pub").items]
    assert kinds == ["registered"]
    with pytest.raises(NotFound):  # a cursor naming no item of this timeline
        datasets.get_dataset_activity(team.member, "pub", before=10**9)
