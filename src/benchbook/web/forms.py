"""Form outcomes on pages: a refused post re-renders its form, a done post redirects with a notice.

A form post that a service refuses (``BenchbookError``) becomes a :class:`Problem`: the page
that holds the form is rendered again with the message beside the field it is about and the
posted values kept (status: the error's, e.g. 400) — never the full-page error of
``web/errors.py``. A post that succeeds answers 303 (POST-redirect-GET) through :func:`done`,
which carries a one-line notice ("Key ci-runner revoked.") to the next page in a short-lived
signed cookie; :func:`take_notice` reads it there once and ``web/render.py`` clears it. A value
shown once (a new API key) travels the same way, encrypted (:func:`with_once`, :func:`take_once`).
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
from typing import Any
from urllib.parse import quote, unquote

from cryptography.fernet import Fernet, InvalidToken
from fastapi import Request, Response
from fastapi.responses import RedirectResponse

from benchbook.errors import BenchbookError, TooManyRequests, Unavailable
from benchbook.services.secrets import derive_key
from benchbook.settings import Settings
from benchbook.transports.auth import app_settings

NOTICE_COOKIE = "benchbook_notice"
ONCE_COOKIE = "benchbook_once"
COOKIE_AGE_S = 60
"""A notice lives until the next page (at most a minute)."""


@dataclasses.dataclass(frozen=True)
class Problem:
    """Why a form post was refused: which ``form`` on the page, the ``field`` (a form field
    name) the message belongs beside, the service's ``message``, the HTTP ``status`` and the
    posted ``values`` to fill the form with again."""

    form: str
    field: str
    message: str
    status: int = 400
    values: dict[str, Any] = dataclasses.field(default_factory=dict)

    def on(self, form: str, name: str | None = None) -> bool:
        """True when this problem belongs to ``form`` (and, given, its field ``name``)."""
        return self.form == form and (name is None or self.field == name)

    def value(self, form: str, name: str, default: Any = "") -> Any:
        """The posted value of ``name`` when this problem is ``form``'s, else ``default``."""
        return self.values.get(name, default) if self.form == form else default


def problem(
    form: str, exc: BenchbookError, values: dict[str, Any], fields: tuple[str, ...]
) -> Problem:
    """A :class:`Problem` for ``exc`` raised by the post of ``form``: the field is the first
    ``details.errors[].path`` (or ``details.field``, or a ``details`` key) that is one of
    ``fields``, else ``fields[0]``.

    Raises ``exc`` again when it is no fault of a field (429 or 503: try again later), so the
    error page answers it with its ``Retry-After``.
    """
    if isinstance(exc, TooManyRequests | Unavailable):
        raise exc
    details = exc.details if isinstance(exc.details, dict) else {}
    named = [str(e.get("path", "")) for e in details.get("errors", []) if isinstance(e, dict)]
    named += [str(details.get("field", ""))] + [str(k) for k in details]
    chosen = next((n for n in named if n in fields), fields[0])
    return Problem(form, chosen, exc.message, exc.http_status, dict(values))


def _mac(settings: Settings, text: str) -> str:
    key = derive_key(settings, "benchbook notice")
    return hmac.new(key, text.encode(), hashlib.sha256).hexdigest()[:32]


def _cipher(settings: Settings) -> Fernet:
    return Fernet(base64.urlsafe_b64encode(derive_key(settings, "benchbook once")))


def _set(request: Request, response: Response, name: str, value: str) -> None:
    secure = request.url.scheme == "https"
    response.set_cookie(
        name, value, max_age=COOKIE_AGE_S, httponly=True, samesite="lax", secure=secure
    )


def done(request: Request, url: str, notice: str) -> Response:
    """303 to ``url`` with ``notice`` shown once on the page it leads to."""
    response = RedirectResponse(url, status_code=303)
    text = quote(notice, safe="")
    signed = f"{_mac(app_settings(request), text)}.{text}"
    _set(request, response, NOTICE_COOKIE, signed)
    return response


def with_once(request: Request, response: Response, value: str) -> Response:
    """Carry ``value`` (encrypted) to the next page, which reads it with :func:`take_once`."""
    token = _cipher(app_settings(request)).encrypt(value.encode()).decode()
    _set(request, response, ONCE_COOKIE, token)
    return response


def take_notice(request: Request) -> str | None:
    """The notice a :func:`done` redirect carried here (None without one or if forged)."""
    raw = request.cookies.get(NOTICE_COOKIE)
    if not raw or "." not in raw:
        return None
    mac, text = raw.split(".", 1)
    if not hmac.compare_digest(mac, _mac(app_settings(request), text)):
        return None
    return unquote(text)


def take_once(request: Request) -> str | None:
    """The value :func:`with_once` carried here (None without one, expired or forged)."""
    raw = request.cookies.get(ONCE_COOKIE)
    if not raw:
        return None
    try:
        plain = _cipher(app_settings(request)).decrypt(raw.encode(), ttl=COOKIE_AGE_S)
    except InvalidToken:
        return None
    return plain.decode()


def forget_carried(request: Request, response: Response) -> None:
    """Clear the notice and once cookies on ``response`` when the request carried them."""
    for name in (NOTICE_COOKIE, ONCE_COOKIE):
        if name in request.cookies:
            response.delete_cookie(name)
