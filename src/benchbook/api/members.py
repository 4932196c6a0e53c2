"""Members of the caller's workspace, and users and workspaces of the installation (SPEC C).

``/api/members`` is per workspace (listing: any member; changes: ``members:manage``, admins).
``/api/users`` and ``POST /api/workspaces`` are for installation admins; ``GET
/api/workspaces`` lists the caller's own. Each ``operation_id`` is the service function's name.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Response
from pydantic import Field, StrictBool

from benchbook.api.deps import ContextDep, RequestBody
from benchbook.api.errors import error_responses
from benchbook.contracts.accounts import Member, Role, User, Workspace
from benchbook.contracts.common import schema_rule
from benchbook.services import accounts as svc
from benchbook.services.accounts import MIN_PASSWORD_CHARS, WORKSPACE_RE
from benchbook.transports.limits import body_limit

router = APIRouter(prefix="/api", tags=["members"])

ACCOUNT_BODY_BYTES = 16 * 1024
"""Bound of member, user and workspace requests (a few short fields)."""


#: ``services.accounts``' rules: an email is name@host once trimmed, a display name at most 200
#: characters once trimmed (empty: the email's name).
EMAIL_PATTERN = r"^[ \t\n\r]*[^@\s\x00-\x1f\x85]{1,200}@[^@\s\x00-\x1f\x85]{1,200}[ \t\n\r]*$"
DISPLAY_NAME_PATTERN = (
    r"^\s*(?:[^\s\x00\x1c-\x1f\x85](?:[^\x00]{0,198}[^\s\x00\x1c-\x1f\x85])?)?\s*$"
)


class MemberRequest(RequestBody):
    """Body of ``POST /api/members``."""

    user: str = Field(description="The user's email or id.")
    role: Role = "member"


class RoleRequest(RequestBody):
    """Body of ``PUT /api/members/{user}/role``."""

    role: Role


class UserRequest(RequestBody):
    """Body of ``POST /api/users``; without ``password`` the user signs in with API keys only."""

    email: Annotated[str, schema_rule(pattern=EMAIL_PATTERN)]
    display_name: Annotated[str, schema_rule(pattern=DISPLAY_NAME_PATTERN)] = ""
    password: Annotated[str, schema_rule(minLength=MIN_PASSWORD_CHARS)] | None = Field(
        default=None, description="At least 8 characters."
    )
    installation_admin: StrictBool = False


class WorkspaceRequest(RequestBody):
    """Body of ``POST /api/workspaces``."""

    id: Annotated[str, schema_rule(pattern=WORKSPACE_RE.pattern)] = Field(
        description="1-64 of [a-z0-9_-], starting with a letter or digit."
    )
    name: str = ""


@router.get(
    "/members",
    operation_id="list_members",
    response_model=list[Member],
    responses=error_responses(403),
)
def list_members(ctx: ContextDep) -> list[Member]:
    """Members of the caller's workspace, by email."""
    return svc.list_members(ctx)


@router.post(
    "/members",
    operation_id="add_member",
    status_code=201,
    response_model=Member,
    responses=error_responses(400, 403, 404, 409, 413),
    openapi_extra=body_limit(ACCOUNT_BODY_BYTES),
)
def add_member(ctx: ContextDep, request: MemberRequest) -> Member:
    """Add an existing user to the workspace (admins); 404 unknown user, 409 already a member."""
    return svc.add_member(ctx, request.user, request.role)


@router.put(
    "/members/{user}/role",
    operation_id="set_member_role",
    response_model=Member,
    responses=error_responses(400, 403, 404, 409, 413),
    openapi_extra=body_limit(ACCOUNT_BODY_BYTES),
)
def set_member_role(ctx: ContextDep, user: str, request: RoleRequest) -> Member:
    """Change a member's role (admins); 409 when it would leave no admin."""
    return svc.set_member_role(ctx, user, request.role)


@router.delete(
    "/members/{user}",
    operation_id="remove_member",
    status_code=204,
    response_class=Response,
    responses=error_responses(403, 404, 409),
)
def remove_member(ctx: ContextDep, user: str) -> Response:
    """Remove a member (admins): their keys and sessions here stop working; 409 for the last
    admin."""
    svc.remove_member(ctx, user)
    return Response(status_code=204)


@router.get(
    "/users", operation_id="list_users", response_model=list[User], responses=error_responses(403)
)
def list_users(ctx: ContextDep) -> list[User]:
    """Every user of the installation, by email (installation admins)."""
    return svc.list_users(ctx)


@router.post(
    "/users",
    operation_id="create_user",
    status_code=201,
    response_model=User,
    responses=error_responses(400, 403, 409, 413),
    openapi_extra=body_limit(ACCOUNT_BODY_BYTES),
)
def create_user(ctx: ContextDep, request: UserRequest) -> User:
    """Create a user (installation admins); 409 when the email is taken. Add them to a
    workspace with ``POST /api/members``."""
    return svc.create_user(
        ctx, request.email, request.display_name, request.password, request.installation_admin
    )


@router.get(
    "/workspaces",
    operation_id="list_workspaces",
    response_model=list[Workspace],
    responses=error_responses(403),
)
def list_workspaces(ctx: ContextDep) -> list[Workspace]:
    """The caller's workspaces (installation admins: all but ``_shared``)."""
    return svc.list_workspaces(ctx)


@router.post(
    "/workspaces",
    operation_id="create_workspace",
    status_code=201,
    response_model=Workspace,
    responses=error_responses(400, 403, 409, 413),
    openapi_extra=body_limit(ACCOUNT_BODY_BYTES),
)
def create_workspace(ctx: ContextDep, request: WorkspaceRequest) -> Workspace:
    """Create a workspace (installation admins); the creator, when a user, becomes its admin."""
    return svc.create_workspace(ctx, request.id, request.name)
