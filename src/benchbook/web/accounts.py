"""Pages for accounts: login, logout, workspace switcher, account (API keys, personal secrets)
and members (admins). Every change goes through ``services.auth``, ``keys``, ``secrets`` and
``accounts``; these handlers only read forms, call one service and redirect.
"""

from __future__ import annotations

import hmac
import secrets as random_source
from dataclasses import replace

from fastapi import APIRouter, Request, Response
from fastapi.responses import RedirectResponse
from starlette.concurrency import run_in_threadpool

from benchbook.contracts.accounts import Role
from benchbook.errors import BenchbookError, Forbidden, InvalidInput, NotFound, TooManyRequests
from benchbook.services import accounts, endpoints, keys, secrets
from benchbook.services.auth import (
    SESSION_TTL,
    authenticate_password,
    end_session,
    start_session,
)
from benchbook.services.bounds import check_text
from benchbook.services.keys import parse_scope
from benchbook.transports.auth import (
    SESSION_COOKIE,
    app_engine,
    client_address,
    login_device,
    login_throttle,
    set_device_cookie,
)
from benchbook.transports.limits import body_limit
from benchbook.web.errors import PageRoute
from benchbook.web.forms import Problem, done, problem, take_once, with_once
from benchbook.web.render import people, render
from benchbook.web.session import FormDep, Page, PageDep, form_text

router = APIRouter(route_class=PageRoute, include_in_schema=False)


def _safe_next(value: str) -> str:
    """Only local paths are followed after login (no open redirect)."""
    return value if value.startswith("/") and not value.startswith("//") else "/"


def _role(value: str) -> Role:
    for role in accounts.ROLES:
        if value == role:
            return role
    raise InvalidInput(f"role must be one of {', '.join(accounts.ROLES)}, not {value!r}")


def _with_session(response: Response, request: Request, token: str) -> Response:
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=int(SESSION_TTL.total_seconds()),
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
    )
    return response


LOGIN_FORM_BYTES = 16 * 1024
"""Bound of the login form (unauthenticated: kept small, refused before reading)."""
LOGIN_CSRF_COOKIE = "benchbook_login_csrf"
"""Pre-session CSRF token of the login form (double submit: cookie + hidden field)."""


def _login_page(request: Request, token: str, status: int = 200, **values: object) -> Response:
    values = {"next": "/", "error": None, "email": ""} | values
    response = render(request, None, "login.html", status_code=status, csrf=token, **values)
    response.set_cookie(
        LOGIN_CSRF_COOKIE,
        token,
        max_age=3600,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


@router.get("/login")
def login_form(request: Request, next: str = "/") -> Response:
    """The login form (email + password) with a fresh pre-session CSRF token."""
    token = request.cookies.get(LOGIN_CSRF_COOKIE) or random_source.token_urlsafe(32)
    return _login_page(request, token, next=_safe_next(next))


@router.post("/login", openapi_extra=body_limit(LOGIN_FORM_BYTES))
async def login(request: Request) -> Response:
    """Check the pre-session CSRF token and the password (off the event loop: argon2 is CPU
    work), start a session cookie and go to ``next``. 403 for a forged form (login CSRF), 429
    with ``Retry-After`` after too many failed logins."""
    form = await request.form()
    email, password = str(form.get("email", "")), str(form.get("password", ""))
    next_url = _safe_next(str(form.get("next", "/")))
    cookie = request.cookies.get(LOGIN_CSRF_COOKIE, "")
    presented = str(form.get("csrf", ""))
    if not cookie or not hmac.compare_digest(cookie.encode(), presented.encode()):
        raise Forbidden("the login form expired or came from another site; reload it and log in")
    check_text({"email": email, "password": password})
    engine = app_engine(request)
    try:
        principal = await run_in_threadpool(
            authenticate_password,
            engine,
            email.strip(),
            password,
            throttle=login_throttle(request),
            client=client_address(request),
            device=login_device(request, email.strip()),
        )
        token = await run_in_threadpool(start_session, engine, principal)
    except TooManyRequests as exc:
        page = _login_page(request, cookie, 429, next=next_url, error=exc.message, email=email)
        page.headers["Retry-After"] = str(exc.retry_after_s)
        return page
    except BenchbookError as exc:
        return _login_page(request, cookie, 401, next=next_url, error=exc.message, email=email)
    response = _with_session(RedirectResponse(next_url, status_code=303), request, token)
    response.delete_cookie(LOGIN_CSRF_COOKIE)
    set_device_cookie(response, request, email.strip())
    return response


@router.post("/logout")
def logout(request: Request, posted: FormDep) -> Response:
    """End the session and forget the cookie."""
    page, _ = posted
    if page.session:
        end_session(app_engine(request), page.session)
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(SESSION_COOKIE)
    return response


@router.post("/workspace")
def switch_workspace(request: Request, posted: FormDep) -> Response:
    """Act in another of the caller's workspaces: a new session there replaces this one."""
    page, form = posted
    target = form_text(form, "workspace")
    if target not in {w.id for w in accounts.list_workspaces(page.ctx)}:
        raise NotFound(f"workspace {target!r} not found", {"workspace": target})
    if page.session is None:
        raise InvalidInput("the local admin acts in 'default'; create users to switch workspaces")
    engine = app_engine(request)
    principal = page.ctx.principal
    token = start_session(engine, replace(principal, workspace=target))
    end_session(engine, page.session)
    return _with_session(RedirectResponse("/", status_code=303), request, token)


def _account(request: Request, page: Page, problem: Problem | None = None) -> Response:
    return render(
        request,
        page,
        "account.html",
        status_code=problem.status if problem else 200,
        nav="account",
        keys=keys.list_api_keys(page.ctx) if page.session else [],
        secrets=secrets.list_secrets(page.ctx, "user") if page.session else [],
        created_key=None if problem else take_once(request),
        scopes=("read", "write", "admin"),
        problem=problem,
    )


@router.get("/account")
def account(request: Request, page: PageDep) -> Response:
    """API keys (a new one shown once, revoke) and personal secrets (names only)."""
    return _account(request, page)


@router.post("/account/keys")
def create_key(request: Request, posted: FormDep) -> Response:
    """Create an API key and go back to the account page, which shows the plain key once
    (carried there encrypted, ``web/forms.with_once``). A refused name or scope re-renders the
    form with the message beside the field."""
    page, form = posted
    name, scope = form_text(form, "name"), form_text(form, "scope", "read")
    try:
        created = keys.create_api_key(page.ctx, name, parse_scope(scope))
    except BenchbookError as exc:
        return _account(request, page, problem("key", exc, form, ("name", "scope")))
    response = done(request, "/account#keys", f"Key {created.info.name} created.")
    return with_once(request, response, created.key)


@router.post("/account/keys/{key_id}/revoke")
def revoke_key(request: Request, key_id: str, posted: FormDep) -> Response:
    """Revoke one of the caller's keys."""
    page, _ = posted
    revoked = keys.revoke_api_key(page.ctx, key_id)
    return done(request, "/account#keys", f"Key {revoked.name} revoked.")


@router.post("/account/secrets")
def set_secret(request: Request, posted: FormDep) -> Response:
    """Create or replace a personal secret (the value is never shown again); a bad name or
    value re-renders the form with the name kept (the value is not echoed)."""
    page, form = posted
    name = form_text(form, "name").strip()
    hosts = form_text(form, "hosts").replace(",", " ").split()
    try:
        secrets.set_secret(page.ctx, name, form_text(form, "value"), hosts=hosts)
    except BenchbookError as exc:
        kept = {"name": form_text(form, "name"), "hosts": form_text(form, "hosts")}
        return _account(request, page, problem("secret", exc, kept, ("name", "value", "hosts")))
    return done(request, "/account#secrets", f"Secret {name} saved.")


@router.post("/account/secrets/{name}/delete")
def delete_secret(request: Request, name: str, posted: FormDep) -> Response:
    """Delete a personal secret."""
    page, _ = posted
    secrets.delete_secret(page.ctx, name)
    return done(request, "/account#secrets", f"Secret {name} deleted.")


def _members(request: Request, page: Page, problem: Problem | None = None) -> Response:
    return render(
        request,
        page,
        "members.html",
        status_code=problem.status if problem else 200,
        nav="members",
        members=accounts.list_members(page.ctx),
        endpoints=endpoints.list_endpoints(page.ctx),
        roles=accounts.ROLES,
        names=people(page),
        problem=problem,
    )


@router.get("/members")
def members(request: Request, page: PageDep) -> Response:
    """The workspace's members; admins add, change roles and remove (``list_members``
    authorizes)."""
    return _members(request, page)


@router.post("/members")
def add_member(request: Request, posted: FormDep) -> Response:
    """Add a user (by email) with a role; an unknown user or a member already re-renders the
    form with the email kept and the message beside it."""
    page, form = posted
    email = form_text(form, "email").strip()
    try:
        added = accounts.add_member(page.ctx, email, _role(form_text(form, "role", "member")))
    except BenchbookError as exc:
        return _members(request, page, problem("member", exc, form, ("email", "role")))
    return done(request, "/members", f"{added.email} added as {added.role}.")


@router.post("/members/{user_id}/role")
def set_role(request: Request, user_id: str, posted: FormDep) -> Response:
    """Change a member's role."""
    page, form = posted
    try:
        changed = accounts.set_member_role(page.ctx, user_id, _role(form_text(form, "role")))
    except BenchbookError as exc:
        return _members(request, page, problem(f"row-{user_id}", exc, form, ("role",)))
    return done(request, "/members", f"{changed.email} is now {changed.role}.")


@router.post("/members/{user_id}/remove")
def remove_member(request: Request, user_id: str, posted: FormDep) -> Response:
    """Remove a member from the workspace."""
    page, _ = posted
    email = next((m.email for m in accounts.list_members(page.ctx) if m.user_id == user_id), None)
    try:
        accounts.remove_member(page.ctx, user_id)
    except BenchbookError as exc:
        return _members(request, page, problem(f"row-{user_id}", exc, {}, ("role",)))
    return done(request, "/members", f"{email or user_id} removed from {page.ctx.workspace}.")


@router.post("/endpoints")
def add_endpoint(request: Request, posted: FormDep) -> Response:
    """Register a model endpoint of the workspace (admins); a bad name or URL re-renders the
    members page with the message beside the field."""
    page, form = posted
    name, url = form_text(form, "name").strip(), form_text(form, "url").strip()
    try:
        endpoints.add_endpoint(page.ctx, name, url)
    except BenchbookError as exc:
        kept = {"name": name, "url": url}
        return _members(request, page, problem("endpoint", exc, kept, ("name", "url")))
    return done(request, "/members#endpoints", f"Endpoint {name} added.")


@router.post("/endpoints/{name}/remove")
def remove_endpoint(request: Request, name: str, posted: FormDep) -> Response:
    """Remove a model endpoint of the workspace (admins)."""
    page, _ = posted
    endpoints.remove_endpoint(page.ctx, name)
    return done(request, "/members#endpoints", f"Endpoint {name} removed.")
