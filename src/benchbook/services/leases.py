"""Who holds a run or an import job, whether that holder may still be alive, and the thread
that keeps a holder's leases fresh (issue 13 item 2: several servers on one database).

A holder id is ``host:pid:nonce`` (``host`` from ``settings.worker_host``, default the host
name). A holder is taken to be alive when its process exists (same host: the process table
decides, at once) or, on another host, while its lease has not lapsed. Leases are written as an
absolute expiry time (``lease_expires_at``) by the holder, from its own clock: replicas must
keep their clocks in step (NTP) to well within ``run_lease_s``.
"""

from __future__ import annotations

import logging
import os
import secrets as random_source
import socket
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from benchbook.errors import Unavailable
from benchbook.settings import Settings
from benchbook.store.tables import utcnow

log = logging.getLogger(__name__)

_HOSTNAME = socket.gethostname()


def local_host(settings: Settings | None) -> str:
    """This process's host name as written in holder ids."""
    return (settings.worker_host if settings is not None else None) or _HOSTNAME


def worker_id(settings: Settings | None = None) -> str:
    """A new holder id ``host:pid:nonce`` for this process."""
    return f"{local_host(settings)}:{os.getpid()}:{random_source.token_hex(3)}"


def lease_until(settings: Settings, now: datetime | None = None) -> datetime:
    """When a lease taken or renewed now lapses (``now + settings.run_lease_s``)."""
    return (now or utcnow()) + timedelta(seconds=settings.run_lease_s)


def on_this_host(holder: str, settings: Settings | None) -> bool:
    """Whether ``holder`` names a process of this host."""
    return holder.partition(":")[0] == local_host(settings)


def holder_alive(
    holder: str | None,
    expires_at: datetime | None,
    settings: Settings | None,
    now: datetime | None = None,
) -> bool:
    """Whether the process behind ``holder`` may still be working: on this host its pid must
    exist (not a zombie); elsewhere its lease must not have lapsed."""
    if not holder:
        return False
    if on_this_host(holder, settings):
        parts = holder.split(":")
        return pid_alive(parts[1] if len(parts) > 1 else "")
    return expires_at is not None and expires_at > (now or utcnow())


def pid_alive(pid_text: str) -> bool:
    """Whether a process exists and is not a zombie (killed, not yet reaped by its parent)."""
    try:
        pid = int(pid_text)
        os.kill(pid, 0)
    except (ProcessLookupError, ValueError, OverflowError):
        return False
    except PermissionError:
        return True
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True  # no procfs: existence is all we know
    state = next((ln for ln in status.splitlines() if ln.startswith("State:")), "")
    return "zombie" not in state and "\tZ" not in state


class LeaseKeeper(threading.Thread):
    """Calls ``renew()`` every ``every_s`` seconds until stopped or until ``renew`` returns
    False (the lease is lost). A failing renewal is logged and tried again next time: the
    lease lapses only when renewals keep failing for ``run_lease_s``."""

    def __init__(self, name: str, renew: Callable[[], bool], every_s: float) -> None:
        super().__init__(name=f"benchbook-lease-{name}", daemon=True)
        self.renew, self.every_s = renew, every_s
        self._stop_event = threading.Event()

    def stop(self) -> None:
        """Stop renewing (the caller releases or finishes what it held)."""
        self._stop_event.set()

    def run(self) -> None:
        while not self._stop_event.wait(self.every_s):
            try:
                if not self.renew():
                    return
            except Unavailable as exc:  # SQLite's writer busy (a long import): next time
                log.warning("lease renewal %s postponed: %s", self.name, exc.message)
            except Exception:
                log.exception("lease renewal %s failed; retrying", self.name)

    def __enter__(self) -> LeaseKeeper:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
