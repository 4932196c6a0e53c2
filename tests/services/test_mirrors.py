"""The mirrors service (issue 12 item 4): who may seed and list, and errors as InvalidInput."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from sqlalchemy import Engine

from benchbook.errors import Forbidden, InvalidInput
from benchbook.services import mirrors as svc
from benchbook.services.context import Context, Principal
from benchbook.settings import Settings


def _bundle(shared_data: Path) -> str:
    (bundle,) = (shared_data / "contextbench" / "repos").glob("clap-rs__clap@*.bundle")
    return str(bundle)


def _as(engine: Engine, settings: Settings, role: str, installation: bool = False) -> Context:
    principal = Principal("u1", "U", "default", role, can_publish_shared=installation)  # type: ignore[arg-type]
    return Context(principal, engine, settings)


def test_an_installation_admin_seeds_and_a_viewer_lists(
    ctx: Context, engine: Engine, settings: Settings, shared_data: Path
) -> None:
    result = svc.add_mirror(ctx, "clap-rs/clap", _bundle(shared_data))
    assert result.created and result.mirror.url == "https://github.com/clap-rs/clap.git"
    listed = svc.list_mirrors(_as(engine, settings, "viewer"))
    assert [(m.repo, m.commits, m.shallow) for m in listed] == [("clap-rs/clap", 1, True)]


@pytest.mark.parametrize(("role", "installation"), [("member", False), ("admin", False)])
def test_only_an_installation_admin_may_seed_a_mirror(
    engine: Engine, settings: Settings, shared_data: Path, role: str, installation: bool
) -> None:
    with pytest.raises(Forbidden, match="installation admins"):
        svc.add_mirror(
            _as(engine, settings, role, installation), "clap-rs/clap", _bundle(shared_data)
        )
    assert svc.list_mirrors(_as(engine, settings, "viewer")) == []


def test_bad_input_is_invalid_input_naming_it(ctx: Context, tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="'clap' is not owner/name"):
        svc.add_mirror(ctx, "clap", str(tmp_path))
    with pytest.raises(InvalidInput, match="is not a git repository with a commit"):
        svc.add_mirror(ctx, "a/b", str(tmp_path))
    assert svc.list_mirrors(ctx) == []


def test_mirrors_are_seeded_and_listed_from_a_thread_that_runs_an_event_loop(
    ctx: Context, shared_data: Path
) -> None:
    """A notebook or Playwright's sync API runs a loop in the calling thread (red before:
    'asyncio.run() cannot be called from a running event loop')."""

    async def from_a_loop() -> list[str]:
        svc.add_mirror(ctx, "clap-rs/clap", _bundle(shared_data))
        return [m.repo for m in svc.list_mirrors(ctx)]

    assert asyncio.run(from_a_loop()) == ["clap-rs/clap"]
