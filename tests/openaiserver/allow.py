"""Let a workspace call a local OpenAI-compatible server (issue 27 item 3): register its URL as
an endpoint and bind secrets to its host, as an admin would."""

from __future__ import annotations

import contextlib

from benchbook.errors import Conflict
from benchbook.runtime.egress import host_of
from benchbook.services import endpoints
from benchbook.services.context import Context


def allow_endpoint(ctx: Context, url: str) -> None:
    """Register ``url`` as an endpoint of ``ctx``'s workspace (again: no-op)."""
    with contextlib.suppress(Conflict):
        endpoints.add_endpoint(ctx, "local-" + host_of(url).replace(":", "-"), url)


def hosts_of(url: str) -> list[str]:
    """The ``hosts`` a secret sent to ``url`` is bound to."""
    return [host_of(url)]
