"""What the caller may do, for transports that render controls (issue 9 item 6: authorization
lives in the services only). Each predicate is the same rule the operation enforces — the
operations call these very predicates — so a page shows a control exactly when the service
would allow the action, and a page that only leads to a write is refused by the service.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchbook.contracts.registry import VersionInfo
from benchbook.services.context import Context


@dataclass(frozen=True)
class Controls:
    """What the caller's role lets them start anywhere in their workspace (navigation, lists)."""

    register: bool
    """``register_dataset``: a new dataset or version (the register form)."""
    import_: bool
    """``start_import`` and uploads for it (the import wizard)."""
    comment: bool
    """``create_comment``."""
    read_members: bool
    """``list_members``."""
    manage_members: bool
    """``add_member``, ``set_member_role``, ``remove_member``."""


def controls(ctx: Context) -> Controls:
    """The caller's :class:`Controls`."""
    return Controls(
        register=ctx.allows("datasets:write"),
        import_=ctx.allows("datasets:write"),
        comment=ctx.allows("comments:write"),
        read_members=ctx.allows("members:read"),
        manage_members=ctx.allows("members:manage"),
    )


def require_register(ctx: Context) -> None:
    """Forbidden unless ``register_dataset`` could succeed for the caller (the register form)."""
    ctx.require("datasets:write")


def require_import(ctx: Context) -> None:
    """Forbidden unless ``start_import`` could succeed for the caller (the wizard, uploads)."""
    ctx.require("datasets:write")


def may_write_dataset_version(ctx: Context, version: VersionInfo) -> bool:
    """True when the caller may tag ``version`` (``set_dataset_version_tags``) or register a
    new version beside it: ``datasets:write`` and a version of the caller's own workspace."""
    return version.workspace == ctx.workspace and ctx.allows("datasets:write")


def may_delete_created_by(ctx: Context, created_by: str) -> bool:
    """The delete rule after ``datasets:write``: the creator, or ``datasets:delete``."""
    return created_by == ctx.principal.user_id or ctx.allows("datasets:delete")


def may_delete_dataset_version(ctx: Context, version: VersionInfo) -> bool:
    """True when ``delete_dataset_versions`` would let the caller delete ``version``: a version
    of the caller's own workspace, and ``datasets:delete`` or (with ``datasets:write``) its
    creator — so a creator demoted to viewer sees no delete control."""
    if version.workspace != ctx.workspace or not ctx.allows("datasets:write"):
        return False
    return may_delete_created_by(ctx, version.created_by)


def may_delete_comment(ctx: Context, author: str) -> bool:
    """True when ``delete_comment`` would let the caller delete a comment by ``author``:
    ``comments:write``, and the author or ``comments:delete`` — so an author demoted to
    viewer sees no delete control."""
    if not ctx.allows("comments:write"):
        return False
    return author == ctx.principal.user_id or ctx.allows("comments:delete")


def may_start_run(ctx: Context) -> bool:
    """True when ``start_run`` could succeed for the caller (a "Start a run" button)."""
    return ctx.allows("runs:write")


def require_start_run(ctx: Context) -> None:
    """Forbidden unless ``start_run`` could succeed for the caller (the start-run form)."""
    ctx.require("runs:write")


@dataclass(frozen=True)
class RunControls:
    """What the caller may do to one run of their workspace (the run page's action block)."""

    start: bool
    """``start_run`` (another run like this one)."""
    rescore: bool
    """``rescore_run``: ``runs:write`` and the run has ended (not queued or running)."""
    tag: bool
    """``set_scorecard_tags`` on its scorecards: ``runs:write``, the run is ``finished`` and
    the caller started it or is an admin (``runs:manage``)."""


def run_controls(ctx: Context, workspace: str, status: str, started_by: str) -> RunControls:
    """The caller's :class:`RunControls` for a run of ``workspace`` in ``status`` started by
    ``started_by`` — the rules ``rescore_run`` and ``set_scorecard_tags`` enforce (a run of
    another workspace: none)."""
    write = workspace == ctx.workspace and ctx.allows("runs:write")
    return RunControls(
        start=may_start_run(ctx),
        rescore=write and status not in ("queued", "running"),
        tag=write and status == "finished" and ctx.allows_own(started_by, "runs:manage"),
    )
