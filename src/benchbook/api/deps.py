"""Principal resolution for HTTP: the ONE place a request becomes a ``Context``.

Credentials, in order: ``Authorization: Bearer bb_…`` (an API key), else the session cookie
(``benchbook_session``; writes must also carry its CSRF token in ``X-CSRF-Token``). Without
credentials: the local admin of ``default`` while the installation has no users (SPEC C: "until
accounts exist, the local server acts as the admin"), else 401. Routes depend on
:func:`get_context` through ``ContextDep``.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

from fastapi import Depends, Request
from fastapi.routing import APIRoute
from sqlalchemy import Engine

from benchbook.errors import Forbidden, Unauthenticated
from benchbook.services.accounts import installation_has_users
from benchbook.services.auth import authenticate_api_key, authenticate_session, check_csrf
from benchbook.services.bounds import check_text
from benchbook.services.context import Context, Principal, local_admin_context
from benchbook.services.throttle import LoginThrottle
from benchbook.settings import Settings

SESSION_COOKIE = "benchbook_session"
CSRF_HEADER = "x-csrf-token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def app_engine(request: Request) -> Engine:
    """The engine ``create_app`` opened (``app.state.engine``)."""
    engine: Engine = request.app.state.engine
    return engine


def app_settings(request: Request) -> Settings:
    """The settings ``create_app`` was built with (``app.state.settings``)."""
    settings: Settings = request.app.state.settings
    return settings


def login_throttle(request: Request) -> LoginThrottle:
    """The app's failed-login counters (``app.state.login_throttle``, one per app)."""
    throttle: LoginThrottle = request.app.state.login_throttle
    return throttle


def get_context(request: Request) -> Context:
    """The caller's ``Context`` (principal + engine + settings) for this request.

    Raises Unauthenticated (401) for missing, invalid, expired or revoked credentials and
    Forbidden (403) for a cookie-authenticated write without the session's CSRF token.
    """
    engine, settings = app_engine(request), app_settings(request)
    return Context(
        principal=request_principal(request, engine, settings), engine=engine, settings=settings
    )


def request_principal(request: Request, engine: Engine, settings: Settings) -> Principal:
    """Who is asking: API key, else session cookie, else (no users yet) the local admin."""
    header = request.headers.get("authorization")
    if header is not None:
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthenticated("use 'Authorization: Bearer bb_…'")
        return authenticate_api_key(engine, token.strip())
    session = request.cookies.get(SESSION_COOKIE)
    if session:
        principal = authenticate_session(engine, session)
        presented = request.headers.get(CSRF_HEADER, "")
        if request.method not in SAFE_METHODS and not check_csrf(settings, session, presented):
            raise Forbidden("missing or wrong CSRF token (send it in X-CSRF-Token)")
        return principal
    if not installation_has_users(engine):
        if request.method not in SAFE_METHODS and cross_origin(request):
            raise Forbidden("cross-origin write refused (no credentials, local admin mode)")
        return local_admin_context(engine, settings).principal
    raise Unauthenticated("log in, or send 'Authorization: Bearer bb_…'")


def cross_origin(request: Request) -> bool:
    """True when a browser says the request comes from another origin.

    Browsers send ``Origin`` (or at least ``Referer``) on cross-site writes; scripts such as
    ``curl`` send neither and are not cross-origin. Compared against the ``Host`` header.
    """
    source = request.headers.get("origin") or request.headers.get("referer")
    if not source:
        return False
    return urlsplit(source).netloc != request.headers.get("host", "")


async def request_text(request: Request) -> None:
    """Refuse NUL and lone surrogates in any path, query or JSON body string (400 naming the
    field) before a route runs: a database cannot store them (app-wide dependency).

    Only routes with a declared body model are checked: FastAPI has already parsed (and
    cached) their JSON; raw-stream routes parse with orjson and strict contracts themselves.
    """
    check_text(dict(request.path_params), "path")
    check_text(dict(request.query_params), "query")
    route = request.scope.get("route")
    if isinstance(route, APIRoute) and route.body_field is not None:
        try:
            body = await request.json()
        except ValueError:
            return  # FastAPI reports the malformed body itself
        check_text(body)


ContextDep = Annotated[Context, Depends(get_context)]
"""Route parameter type: ``ctx: ContextDep``."""
