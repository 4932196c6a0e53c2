"""Login, logout and "who am I" over HTTP (SPEC C): the browser-session side of authentication.

``POST /api/login`` checks email + password, starts a server-side session and sets it as an
HttpOnly, SameSite=Lax cookie; the response carries the session's CSRF token, which writes made
with the cookie must send back in ``X-CSRF-Token``. API-key clients never need these routes.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel

from benchbook.api.deps import ContextDep, RequestBody
from benchbook.api.errors import error_responses
from benchbook.services.auth import (
    SESSION_TTL,
    authenticate_password,
    csrf_token,
    end_session,
    start_session,
)
from benchbook.services.context import Principal
from benchbook.transports.auth import (
    SESSION_COOKIE,
    app_engine,
    app_settings,
    client_address,
    login_device,
    login_throttle,
    set_device_cookie,
)

router = APIRouter(prefix="/api", tags=["accounts"])


class LoginRequest(RequestBody):
    """Email + password, and optionally the workspace to act in."""

    email: str
    password: str
    workspace: str | None = None


class Me(BaseModel):
    """The authenticated principal; ``csrf_token`` only right after login."""

    user_id: str
    display_name: str
    workspace: str
    role: str
    can_publish_shared: bool
    csrf_token: str | None = None


def _me(principal: Principal, csrf: str | None = None) -> Me:
    return Me(
        user_id=principal.user_id,
        display_name=principal.display_name,
        workspace=principal.workspace,
        role=principal.role,
        can_publish_shared=principal.can_publish_shared,
        csrf_token=csrf,
    )


@router.post(
    "/login", operation_id="login", response_model=Me, responses=error_responses(400, 401, 429)
)
def login(body: LoginRequest, request: Request, response: Response) -> Me:
    """Start a browser session (cookie) for an email + password; returns the CSRF token.
    429 with ``Retry-After`` after too many failed logins for the account or the address; a
    client holding the device cookie of an earlier login as this email is throttled on its
    own (``benchbook_device``, renewed here)."""
    engine, settings = app_engine(request), app_settings(request)
    principal = authenticate_password(
        engine,
        body.email,
        body.password,
        body.workspace,
        throttle=login_throttle(request),
        client=client_address(request),
        device=login_device(request, body.email),
    )
    token = start_session(engine, principal)
    set_device_cookie(response, request, body.email)
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=int(SESSION_TTL.total_seconds()),
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
        path="/",
    )
    return _me(principal, csrf_token(settings, token))


@router.post("/logout", operation_id="logout", status_code=204)
def logout(request: Request) -> Response:
    """End the browser session (if any) and clear its cookie."""
    token = request.cookies.get(SESSION_COOKIE)
    if token:
        end_session(app_engine(request), token)
    response = Response(status_code=204)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


@router.get("/me", operation_id="get_me", response_model=Me, responses=error_responses(401))
def get_me(ctx: ContextDep) -> Me:
    """The caller as authenticated by key, cookie or (before any user exists) the local admin."""
    return _me(ctx.principal)
