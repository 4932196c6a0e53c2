"""Who is looking at a page: the session cookie → a ``Context`` (the same services as the API).

Pages resolve the caller with ``transports/auth.py`` like the API and MCP (session cookie, or
the local admin while the installation has no users), but an unauthenticated page redirects to
``/login`` instead of answering 401, and form posts carry the CSRF token as a hidden ``csrf``
field (JSON calls from the dashboard's scripts send it in ``X-CSRF-Token``). While an
installation has no users the local admin acts without a session, as on the API; its posts must
then come from the same origin (``Origin``/``Referer`` host equals ``Host``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import Depends, Request
from sqlalchemy import Engine
from starlette.concurrency import run_in_threadpool

from benchbook.contracts.registry import VersionInfo
from benchbook.errors import Unauthenticated
from benchbook.services.auth import csrf_token
from benchbook.services.bounds import check_text
from benchbook.services.context import Context, local_admin_context
from benchbook.services.controls import (
    Controls,
    controls,
    may_delete_comment,
    may_write_dataset_version,
)
from benchbook.settings import Settings
from benchbook.transports.auth import (
    CSRF_HEADER,
    SESSION_COOKIE,
    app_engine,
    app_settings,
    authenticate_request,
    check_request_csrf,
    is_write,
)

CSRF_FIELD = "csrf"


class LoginRequired(Exception):
    """Raised by a page dependency when nobody is logged in; answered with a redirect."""

    def __init__(self, next_url: str) -> None:
        super().__init__(next_url)
        self.next_url = next_url


@dataclass
class Page:
    """A page request's caller: the service ``Context``, the session token (None for the
    local admin of an installation without users) and the CSRF token forms must echo."""

    ctx: Context
    session: str | None
    csrf: str

    @property
    def may(self) -> Controls:
        """What the services let the caller start (``services.controls``), for showing
        controls only; the operations decide again."""
        return controls(self.ctx)

    def may_write_version(self, version: VersionInfo) -> bool:
        """The service's answer: may the caller tag ``version`` or add a version beside it."""
        return may_write_dataset_version(self.ctx, version)

    def may_delete_comment(self, author: str) -> bool:
        """The service's answer: may the caller delete a comment by ``author``."""
        return may_delete_comment(self.ctx, author)

    @property
    def user_id(self) -> str:
        """The caller's user id (``local-admin`` without accounts)."""
        return self.ctx.principal.user_id


def _next_url(request: Request) -> str:
    path = request.url.path
    return path + (f"?{request.url.query}" if request.url.query else "")


def login_url(next_url: str) -> str:
    """``/login?next=…`` for a page path."""
    return "/login?next=" + quote(next_url, safe="/")


def _presented_csrf(request: Request, form: dict[str, Any] | None) -> str:
    if form is not None and isinstance(form.get(CSRF_FIELD), str):
        return str(form[CSRF_FIELD])
    return request.headers.get(CSRF_HEADER, "")


def resolve_page(
    request: Request,
    engine: Engine,
    settings: Settings,
    form: dict[str, Any] | None = None,
    with_csrf: bool = True,
) -> Page:
    """The caller of a page request (``with_csrf=False``: authenticate only, CSRF later).

    The principal comes from ``transports/auth.py`` like the API's, without API keys and with
    the local admin's writes required to name this origin.

    Raises:
        LoginRequired: no (valid) session while the installation has users.
        Forbidden: a write (non-GET) without the session's CSRF token, or, for the local admin,
            from another origin.
    """
    try:
        caller = authenticate_request(
            request, engine, settings, accept_bearer=False, origin_required=True
        )
    except Unauthenticated as exc:
        expired = SESSION_COOKIE in request.cookies  # back to this page once logged in again
        next_url = _next_url(request) if expired or not is_write(request) else "/"
        raise LoginRequired(next_url) from exc
    if caller.session is None:
        return Page(ctx=local_admin_context(engine, settings), session=None, csrf="local")
    if with_csrf:
        presented = _presented_csrf(request, form)
        check_request_csrf(request, settings, caller, presented, "reload the page and try again")
    ctx = Context(principal=caller.principal, engine=engine, settings=settings)
    return Page(ctx=ctx, session=caller.session, csrf=csrf_token(settings, caller.session))


def page_caller(request: Request) -> Page:
    """Dependency for GET pages and JSON calls (CSRF from ``X-CSRF-Token`` on writes)."""
    return resolve_page(request, app_engine(request), app_settings(request))


async def form_caller(request: Request) -> tuple[Page, dict[str, Any]]:
    """Dependency for form posts: the caller (CSRF checked from the ``csrf`` field) and the
    form's fields (repeated names become lists; uploads are excluded). InvalidInput when a
    field holds NUL."""
    engine, settings = app_engine(request), app_settings(request)
    # Authenticate before reading the body: an unauthenticated post is refused unread (the
    # CSRF token, which is in the body, is checked once the form is read).
    await run_in_threadpool(resolve_page, request, engine, settings, None, False)
    raw = await request.form()
    form: dict[str, Any] = {}
    for key, value in raw.multi_items():
        if not isinstance(value, str):
            continue
        if key in form:
            prior = form[key]
            form[key] = [*prior, value] if isinstance(prior, list) else [prior, value]
        else:
            form[key] = value
    page = await run_in_threadpool(resolve_page, request, engine, settings, form)
    check_text(form)  # NUL (``%00``) cannot be stored: 400 naming the field
    return page, form


PageDep = Annotated[Page, Depends(page_caller)]
FormDep = Annotated[tuple[Page, dict[str, Any]], Depends(form_caller)]


def form_list(form: dict[str, Any], key: str) -> list[str]:
    """A form field that may repeat, as a list of strings."""
    value = form.get(key)
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def form_text(form: dict[str, Any], key: str, default: str = "") -> str:
    """A single form field as text (the last one when repeated)."""
    values = form_list(form, key)
    return values[-1] if values else default
