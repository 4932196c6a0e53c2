"""Where the server's own git may fetch a ``repo`` case's repository from (the browser's host
rules, :mod:`.egress`, applied to git).

A case's ``git`` URL is data a member wrote, and the clone or fetch of its mirror runs outside
the sandbox with the server's network, so before git touches the network:

- the URL is ``http(s)://host[:port]/owner/name`` (``contracts.git_urls``: no ``file://``,
  ``ext::``, ``ssh``, local path, user, query or fragment), and git may speak only http(s)
  (``GIT_ALLOW_PROTOCOL``) and follows no redirect (``http.followRedirects=false``);
- an IP literal host must be public, unless the installation lists it in
  ``BENCHBOOK_GIT_ALLOWED_HOSTS`` (``127.0.0.1:8080``; listing the address is the permission);
- a name is resolved and **every** address must be public (a listed name too); git is then
  pinned to the checked address (``http.curloptResolve``), so a second DNS answer (rebinding)
  changes nothing.

A mirror already in the cache (seeded by an installation admin, or cloned earlier) is read
without network whatever its host: only a clone or a fetch is checked.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from benchbook.contracts.git_urls import git_url_problem
from benchbook.runtime.environments.egress import (
    EgressError,
    IPAddress,
    blocked_range,
    parse_entry,
    resolve_addresses,
)

#: What ``GIT_ALLOW_PROTOCOL`` lets a network clone or fetch speak.
GIT_PROTOCOLS = "http:https"
_RULE = "only public hosts or registered mirrors"
_SETTING = "BENCHBOOK_GIT_ALLOWED_HOSTS"


class GitEgressError(ValueError):
    """The server's git may not fetch this URL; the message names the host and the rule."""


def _target(url: str) -> tuple[str, int]:
    problem = git_url_problem(url)
    if problem is not None:
        raise GitEgressError(f"git URL refused: {problem}")
    parts = urlsplit(url)
    host = (parts.hostname or "").strip("[]").lower()
    return host, parts.port or (443 if parts.scheme == "https" else 80)


def _listed(host: str, port: int, allowed: tuple[str, ...]) -> bool:
    for entry in allowed:
        try:
            name, entry_port = parse_entry(entry)
        except EgressError:
            continue
        if name.strip("[]") == host and entry_port in (None, port):
            return True
    return False


def _literal(host: str) -> IPAddress | None:
    """``host`` as an address, legacy IPv4 spellings included (``127.1``, ``2130706433``,
    ``0x7f.1``: curl and the resolver read them as addresses)."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        return None


def static_problem(url: str, allowed: tuple[str, ...]) -> str | None:
    """What can be refused from the URL alone (no DNS): a bad URL, an IP literal in a
    loopback, private, link-local … range that is not listed, or ``localhost``."""
    try:
        host, port = _target(url)
    except GitEgressError as exc:
        return str(exc)
    if _listed(host, port, allowed):
        return None
    literal = _literal(host)
    why = blocked_range(literal) if literal is not None else None
    if why is None and (host == "localhost" or host.endswith(".localhost")):
        why = "loopback"
    if why is not None:
        return f"git host {host} is {why}: {_RULE} (or list it in {_SETTING})"
    return None


async def git_network_config(url: str, allowed: tuple[str, ...]) -> list[str]:
    """The ``-c`` options a clone or fetch of ``url`` runs with, once its host passed.

    Raises:
        GitEgressError: naming the host and the rule.
    """
    problem = static_problem(url, allowed)
    if problem is not None:
        raise GitEgressError(problem)
    host, port = _target(url)
    config = ["-c", "http.followRedirects=false"]
    if _literal(host) is not None:
        return config  # a public literal, or one the installation listed
    try:
        addresses = await resolve_addresses(host)
    except OSError as exc:
        raise GitEgressError(f"git host {host} does not resolve ({exc})") from None
    bad = [f"{a} ({why})" for a in addresses if (why := blocked_range(a)) is not None]
    if bad or not addresses:
        raise GitEgressError(
            f"git host {host} resolves to {', '.join(bad) or 'nothing'}: {_RULE}"
            " (a name must resolve to public addresses only)"
        )
    v4 = [a for a in addresses if a.version == 4]
    pinned = (v4 or addresses)[0]
    address = str(pinned) if pinned.version == 4 else f"[{pinned}]"
    return [*config, "-c", f"http.curloptResolve={host}:{port}:{address}"]


__all__ = ["GIT_PROTOCOLS", "GitEgressError", "git_network_config", "static_problem"]
