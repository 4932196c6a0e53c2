"""Registered graders (issue 27 item 2): commands an admin vouches for, named by run plans and
cases as ``{"id": "command" | "tests-pass", "config": {"grader": "id@version"}}``.

A member's plan or a member-written case may not carry a command of its own (see
:mod:`benchbook.services.code_rules`); it names one of these instead. Registering needs
``graders:write`` (admins); everyone who may read the workspace may list and read them.
"""

from __future__ import annotations

from benchbook.contracts.registered import RegisteredGrader, RegisteredSummary, RegisterResult
from benchbook.datasets.versions import LATEST
from benchbook.services import registered
from benchbook.services.context import Context

GRADER = registered.Noun(name="grader", model=RegisteredGrader, title="grader")


def register_grader(ctx: Context, grader: RegisteredGrader, shared: bool = False) -> RegisterResult:
    """Register a grader version ``{id, version, description?, kind: command, config: {cmd |
    argv, pass_pattern?, timeout_s?}}``.

    Returns:
        ``{workspace, id, version, created, content_hash}``; ``created`` False when the
        identical live version existed.

    Raises:
        Forbidden: without ``graders:write`` (admins), or ``shared`` without publish rights.
        Conflict: the version exists with different content.
    """
    return registered.register(ctx, GRADER, grader, shared)


def list_graders(ctx: Context, search: str | None = None) -> list[RegisteredSummary]:
    """Registered graders the caller sees: own ids plus ``_shared`` ones not shadowed."""
    return registered.list_items(ctx, GRADER, search)


def get_grader(ctx: Context, grader_id: str, version: str = LATEST) -> RegisteredGrader:
    """One registered grader version (exact SemVer or ``latest``). Raises NotFound."""
    return registered.get(ctx, GRADER, grader_id, version)


def delete_grader_version(ctx: Context, grader_id: str, version: str) -> RegisterResult:
    """Tombstone one exact version of your workspace (runs that used it keep their scores).

    Raises:
        Forbidden: without ``graders:write``. NotFound: no such live version here.
    """
    return registered.delete_version(ctx, GRADER, grader_id, version)
