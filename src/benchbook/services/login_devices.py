"""Device cookies: a browser or client that logged in before keeps trying while a stranger
has the account throttled (OWASP "Slow Down Online Guessing Attacks with Device Cookies").

A successful login hands out ``<email, base64url>.<nonce>.<HMAC-SHA256>`` under a key derived
for this purpose from the installation's secret. A login that presents a valid cookie for the
same email is counted against that device alone (``login_failures_per_device`` in the
window), not against the account, so failures from elsewhere cannot lock it out; once the
device holds its own bound of failures its cookie stops counting and it is throttled like any
other client. The cookie proves only that this device logged in as this email before: it
never replaces the password.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets as random_source
from datetime import timedelta

from benchbook.services.secrets import derive_key
from benchbook.settings import Settings

DEVICE_TTL = timedelta(days=180)
"""How long a device cookie is kept by the browser (renewed on every successful login)."""
_MAX_COOKIE_CHARS = 600


def _mac(settings: Settings, payload: str) -> str:
    key = derive_key(settings, "benchbook login device")
    return hmac.new(key, payload.encode(), hashlib.sha256).hexdigest()


def _account(email: str) -> str:
    return email.strip().lower()


def issue_device_cookie(settings: Settings, email: str) -> str:
    """A new device cookie value for ``email`` (set it after a successful login)."""
    name = base64.urlsafe_b64encode(_account(email).encode()).decode().rstrip("=")
    payload = f"{name}.{random_source.token_urlsafe(16)}"
    return f"{payload}.{_mac(settings, payload)}"


def trusted_device(settings: Settings, cookie: str | None, email: str) -> str | None:
    """The device's nonce when ``cookie`` is a valid device cookie issued for ``email``
    (case-insensitive), else None (absent, malformed, forged, or another account's)."""
    if not cookie or len(cookie) > _MAX_COOKIE_CHARS or cookie.count(".") != 2:
        return None
    payload, _, mac = cookie.rpartition(".")
    if not hmac.compare_digest(_mac(settings, payload), mac):
        return None
    name, _, nonce = payload.partition(".")
    padded = name + "=" * (-len(name) % 4)
    try:
        owner = base64.urlsafe_b64decode(padded.encode()).decode()
    except (ValueError, UnicodeDecodeError):
        return None
    return nonce if owner == _account(email) else None
