"""Login throttling: failed logins per account, per client address and per trusted device, in
one process's memory.

An attempt is counted *before* the password is checked (argon2 costs ~50 ms of CPU and 64 MiB),
so concurrent guesses count too and an attacker can neither guess fast nor pile up hashing
work; a success takes its own attempt back and clears the account's failures. Past a bound the
caller gets TooManyRequests with the seconds until the oldest counted attempt leaves the window
(sliding window, OWASP Authentication Cheat Sheet: "login throttling").

A device that logged in as this account before (``services.login_devices``) is counted on its
own key only, so a stranger's failures, which lock the account for every unknown client,
never lock that device out; past its own bound it is counted like an unknown client again.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from benchbook.errors import TooManyRequests
from benchbook.settings import Settings

MAX_TRACKED_KEYS = 100_000
"""Above this many tracked accounts + addresses, expired ones are purged (bounded memory)."""


@dataclass
class LoginThrottle:
    """Sliding-window counters of login attempts; thread-safe (handlers run in threads).

    Attributes:
        per_account: failed logins allowed per email (case-insensitive) per window.
        per_address: failed logins allowed per client address per window.
        per_device: failed logins allowed per trusted device (device cookie) per window.
        window_s: the window in seconds.
        clock: monotonic seconds (tests pass their own).
    """

    per_account: int = 5
    per_address: int = 20
    per_device: int = 5
    window_s: float = 300.0
    clock: Callable[[], float] = time.monotonic
    _attempts: dict[str, deque[float]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def from_settings(cls, settings: Settings) -> LoginThrottle:
        """The throttle configured by ``BENCHBOOK_LOGIN_*`` settings."""
        return cls(
            per_account=settings.login_failures_per_account,
            per_address=settings.login_failures_per_address,
            per_device=settings.login_failures_per_device,
            window_s=float(settings.login_window_s),
        )

    def begin(self, email: str, address: str | None, device: str | None = None) -> bool:
        """Count one attempt for ``email`` and ``address`` — or, from a trusted ``device`` (the
        nonce of a valid device cookie for ``email``) still under its own bound, for that
        device alone. Returns True when it was counted on the device alone.

        Raises:
            TooManyRequests: when a counted key already holds its bound of attempts in the
                window; ``details.retry_after_s`` is when the oldest one expires. Nothing is
                counted.
        """
        now = self.clock()
        with self._lock:
            keys = self._keys(email, address, device, now)
            for key, limit, what in keys:
                recent = self._recent(key, now)
                if len(recent) >= limit:
                    wait = max(1, math.ceil(recent[0] + self.window_s - now))
                    raise TooManyRequests(
                        f"too many failed logins for this {what}; try again in {wait} s",
                        {"retry_after_s": wait, "limit": limit, "window_s": self.window_s},
                    )
            for key, _, _ in keys:
                self._attempts.setdefault(key, deque()).append(now)
            if len(self._attempts) > MAX_TRACKED_KEYS:
                self._purge(now)
            return keys[0][0].startswith("device:")

    def succeeded(self, email: str, address: str | None, device: str | None = None) -> None:
        """A correct password: forget the account's failures, and the device's when the
        attempt was counted on ``device`` (:meth:`begin` returned True), else this attempt of
        the address."""
        with self._lock:
            self._attempts.pop(self._account_key(email), None)
            if device:
                self._attempts.pop("device:" + device, None)
            elif address:
                recent = self._attempts.get("address:" + address)
                if recent:
                    recent.pop()

    def _keys(
        self, email: str, address: str | None, device: str | None, now: float
    ) -> list[tuple[str, int, str]]:
        if device and len(self._recent("device:" + device, now)) < self.per_device:
            return [("device:" + device, self.per_device, "device")]
        keys = [(self._account_key(email), self.per_account, "account (email)")]
        if address:
            keys.append(("address:" + address, self.per_address, "client address"))
        return keys

    @staticmethod
    def _account_key(email: str) -> str:
        return "account:" + email.strip().lower()

    def _recent(self, key: str, now: float) -> deque[float]:
        recent = self._attempts.get(key, deque())
        while recent and recent[0] <= now - self.window_s:
            recent.popleft()
        return recent

    def _purge(self, now: float) -> None:
        for key in [k for k, v in self._attempts.items() if not v or v[-1] <= now - self.window_s]:
            del self._attempts[key]
