"""Preflight (SPEC H.6): one request to every model endpoint a run needs, before any case runs.

A judge whose endpoint is down would make every case a grader error, and an ``openai`` harness
whose endpoint is down every case a harness error — after the whole run was paid for in time.
:func:`preflight_endpoints` asks each distinct endpoint (the plan's judges, the ``openai``
harness) once — ``GET <base_url>/models``, the OpenAI API's cheapest call, which costs no
tokens — and refuses the run or the rescore with the URL and the cause when one does not
answer. A 404 or 405 still proves a server is there (not every compatible server lists its
models), so only no answer, a timeout, 401/403 (the key will not do) and 5xx fail.
``preflight: false`` on the request (``--no-preflight``) skips it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import httpx

from benchbook.contracts.dataset import GraderSpec
from benchbook.contracts.graders import judge_config
from benchbook.contracts.harness import Harness, OpenAIHarness
from benchbook.errors import UpstreamError
from benchbook.services.context import Context
from benchbook.services.secrets import secret_values_for

#: Seconds one preflight request may take, connection included.
PREFLIGHT_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Endpoint:
    """A model endpoint a run will call: who (``judge 'geo'``), its API root and key name."""

    who: str
    base_url: str
    api_key_secret: str | None


def plan_endpoints(graders: Sequence[GraderSpec], harness: Harness | None) -> list[Endpoint]:
    """The distinct endpoints of the plan's judges and an ``openai`` harness, in that order
    (judges whose config does not parse are left to plan checks)."""
    out: list[Endpoint] = []
    if isinstance(harness, OpenAIHarness):
        config = harness.config
        out.append(Endpoint(f"harness {harness.id}", str(config.base_url), config.api_key_secret))
    for spec in graders:
        if spec.id != "judge":
            continue
        try:
            judge = judge_config(spec.config)
        except ValueError:
            continue
        if judge.base_url:
            out.append(Endpoint(f"judge {judge.name!r}", judge.base_url, judge.api_key_secret))
    seen: set[tuple[str, str | None]] = set()
    distinct = []
    for e in out:
        if (e.base_url, e.api_key_secret) not in seen:
            seen.add((e.base_url, e.api_key_secret))
            distinct.append(e)
    return distinct


def preflight_endpoints(endpoints: Sequence[Endpoint], secrets: Mapping[str, str]) -> None:
    """Ask each endpoint once (``GET <base_url>/models``).

    Args:
        endpoints: from :func:`plan_endpoints`.
        secrets: secret values by name; a missing key secret is sent as no key (the endpoint's
            answer decides).

    Raises:
        UpstreamError: an endpoint did not answer (connection refused, DNS, timeout) or
            answered 401, 403 or 5xx; the message names who, the URL (never the key), the
            status and the server's message.
    """
    for endpoint in endpoints:
        url = endpoint.base_url.rstrip("/") + "/models"
        key = secrets.get(endpoint.api_key_secret or "", "EMPTY")
        try:
            response = httpx.get(
                url, headers={"Authorization": f"Bearer {key}"}, timeout=PREFLIGHT_TIMEOUT_S
            )
        except httpx.HTTPError as exc:
            cause = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            raise _failed(endpoint, url, f"no answer ({cause})") from exc
        if response.status_code in (401, 403) or response.status_code >= 500:
            message = response.text[:300].strip()
            cause = f"{response.status_code} {response.reason_phrase}: {message}"
            raise _failed(endpoint, url, cause)


def _failed(endpoint: Endpoint, url: str, cause: str) -> UpstreamError:
    return UpstreamError(
        f"preflight: {endpoint.who} endpoint GET {url} failed: {cause}; nothing was run"
        " (fix the endpoint, or skip the check with --no-preflight / preflight: false)",
        {"who": endpoint.who, "url": url, "cause": cause},
    )


def preflight_plan(ctx: Context, graders: list[GraderSpec], harness: Harness | None) -> None:
    """One request to each model endpoint the plan's judges and ``harness`` call, with the
    caller's keys (requester first). Raises UpstreamError naming the URL and the cause."""
    endpoints = plan_endpoints(graders, harness)
    names = sorted({e.api_key_secret for e in endpoints if e.api_key_secret})
    keys = secret_values_for(ctx.engine, ctx.settings, ctx.principal.user_id, ctx.workspace, names)
    preflight_endpoints(endpoints, keys)


__all__ = ["Endpoint", "plan_endpoints", "preflight_endpoints", "preflight_plan"]
