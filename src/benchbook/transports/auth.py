"""Principal resolution for every transport: the ONE place credentials become a ``Principal``.

Over HTTP (the API, MCP at ``/mcp`` and the dashboard), in order: ``Authorization: Bearer bb_…``
(an API key; the dashboard does not accept one), else the session cookie (``benchbook_session``;
writes must also carry the session's CSRF token — the API and MCP in ``X-CSRF-Token``, dashboard
forms in a hidden field). Without credentials: the local admin of ``default`` while the
installation has no users (SPEC C: "until accounts exist, the local server acts as the admin"),
whose writes must not come from another origin; else Unauthenticated.

A local process (``benchbook mcp`` on stdio): the key in ``BENCHBOOK_API_KEY`` when set, else the
local admin (:func:`local_principal`). The CLI acts as the local admin
(``services.context.local_admin_context``).

Each transport only shapes the answer: the API answers 401/403 envelopes, MCP a 401 with a
Bearer challenge, the dashboard a redirect to ``/login``.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from sqlalchemy import Engine
from starlette.requests import Request
from starlette.responses import Response

from benchbook.errors import Forbidden, Unauthenticated
from benchbook.services.accounts import installation_has_users
from benchbook.services.auth import authenticate_api_key, authenticate_session, check_csrf
from benchbook.services.context import Principal, local_admin_context
from benchbook.services.login_devices import DEVICE_TTL, issue_device_cookie, trusted_device
from benchbook.services.throttle import LoginThrottle
from benchbook.settings import Settings

SESSION_COOKIE = "benchbook_session"
DEVICE_COOKIE = "benchbook_device"
CSRF_HEADER = "x-csrf-token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def app_engine(request: Request) -> Engine:
    """The engine the app factory opened (``app.state.engine``)."""
    engine: Engine = request.app.state.engine
    return engine


def app_settings(request: Request) -> Settings:
    """The settings the app was built with (``app.state.settings``)."""
    settings: Settings = request.app.state.settings
    return settings


def login_throttle(request: Request) -> LoginThrottle:
    """The app's failed-login counters (``app.state.login_throttle``, one per app)."""
    throttle: LoginThrottle = request.app.state.login_throttle
    return throttle


def client_address(request: Request) -> str | None:
    """The caller's network address as the server saw it: the peer, or the address a
    trusted proxy forwarded (``BENCHBOOK_TRUSTED_PROXIES``, applied by ``benchbook serve``)."""
    return request.client.host if request.client else None


def login_device(request: Request, email: str) -> str | None:
    """The nonce of the request's device cookie when it was issued for ``email``, else None."""
    return trusted_device(app_settings(request), request.cookies.get(DEVICE_COOKIE), email)


def set_device_cookie(response: Response, request: Request, email: str) -> None:
    """Hand the device that just logged in as ``email`` a fresh device cookie (HttpOnly,
    SameSite=Lax, 180 days)."""
    response.set_cookie(
        DEVICE_COOKIE,
        issue_device_cookie(app_settings(request), email),
        max_age=int(DEVICE_TTL.total_seconds()),
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
        path="/",
    )


@dataclass(frozen=True)
class Caller:
    """Who sent a request: the principal and the session token (None unless a session cookie
    authenticated it: an API key or the local admin)."""

    principal: Principal
    session: str | None = None


def authenticate_request(
    request: Request,
    engine: Engine,
    settings: Settings,
    *,
    accept_bearer: bool = True,
    origin_required: bool = False,
) -> Caller:
    """The caller of ``request`` before any CSRF check (see :func:`check_request_csrf`).

    Args:
        accept_bearer: accept ``Authorization: Bearer`` (API and MCP; not the dashboard).
        origin_required: for a local-admin write, require ``Origin``/``Referer`` naming this
            host (dashboard forms); otherwise only a present, foreign one is refused.

    Raises:
        Unauthenticated: a malformed, unknown, expired or revoked credential, or none while
            the installation has users.
        Forbidden: a local-admin write from another origin.
    """
    header = request.headers.get("authorization") if accept_bearer else None
    if header is not None:
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthenticated("use 'Authorization: Bearer bb_…'")
        return Caller(authenticate_api_key(engine, token.strip()))
    session = request.cookies.get(SESSION_COOKIE)
    if session:
        return Caller(authenticate_session(engine, session), session)
    if installation_has_users(engine):
        raise Unauthenticated("log in, or send 'Authorization: Bearer bb_…'")
    if is_write(request):
        source = request.headers.get("origin") or request.headers.get("referer")
        foreign = urlsplit(source).netloc != request.headers.get("host", "") if source else False
        if foreign or (origin_required and not source):
            raise Forbidden("cross-origin write refused (no credentials, local admin mode)")
    return Caller(local_admin_context(engine, settings).principal)


def is_write(request: Request) -> bool:
    """True for methods that may change state (anything but GET, HEAD, OPTIONS)."""
    return request.method not in SAFE_METHODS


def check_request_csrf(
    request: Request,
    settings: Settings,
    caller: Caller,
    presented: str | None = None,
    advice: str = "send it in X-CSRF-Token",
) -> None:
    """Refuse a session-authenticated write without its CSRF token (Forbidden).

    ``presented`` is the token the request carries (default: the ``X-CSRF-Token`` header).
    Reads, API keys and the local admin need none.
    """
    if caller.session is None or not is_write(request):
        return
    token = request.headers.get(CSRF_HEADER, "") if presented is None else presented
    if not check_csrf(settings, caller.session, token):
        raise Forbidden(f"missing or wrong CSRF token ({advice})")


def request_principal(request: Request, engine: Engine, settings: Settings) -> Principal:
    """The principal of an API or MCP request: credentials, then the CSRF header on writes."""
    caller = authenticate_request(request, engine, settings)
    check_request_csrf(request, settings, caller)
    return caller.principal


def local_principal(engine: Engine, settings: Settings) -> Principal:
    """The principal of a local process: ``BENCHBOOK_API_KEY``'s owner when set (checked on
    each call: a revoked key stops working), else the local admin of ``default``."""
    if settings.api_key:
        return authenticate_api_key(engine, settings.api_key)
    return local_admin_context(engine, settings).principal
