"""Browser egress (issue 27 item 3): the hosts a browser case may open, checked after DNS
resolution and enforced inside Chromium.

The installation lists ``host`` or ``host:port`` entries (``BENCHBOOK_BROWSER_ALLOWED_HOSTS``).
At the start of each browser case every entry is resolved once:

- an IP literal (``127.0.0.1:8080``) is allowed whatever its range — listing the address is
  the explicit permission loopback, link-local and private ranges need;
- a name must resolve to public addresses only; a name resolving to a loopback, link-local,
  private, multicast or reserved address is refused (a DNS answer cannot open the server's own
  network), and so is a name that does not resolve.

Chromium then gets ``--host-resolver-rules`` mapping each allowed entry to the address checked
here (DNS pinning: a later DNS answer cannot rebind it) and everything else to ``~NOTFOUND``,
so a page, a redirect, a subresource or a CDP-driven navigation to any other host fails with
``ERR_NAME_NOT_RESOLVED`` — IP literals included. The start URL is checked here first: a case
whose start URL is not allowed gets an environment error that says why, and no browser.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

#: Schemes a start URL may have besides http(s) (no network).
_LOCAL_SCHEMES = ("about", "data")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class EgressError(ValueError):
    """An allowed-hosts entry or a URL is not acceptable; the message says which and why."""


@dataclass(frozen=True)
class AllowedHost:
    """One resolved allow-list entry: ``host`` (lower case), ``port`` (None: any port), and
    ``address``, the IP Chromium is pinned to."""

    host: str
    port: int | None
    address: str

    @property
    def pattern(self) -> str:
        """The entry as a Chromium host-mapping pattern (``host`` or ``host:port``)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port is None else f"{host}:{self.port}"


def parse_entry(entry: str) -> tuple[str, int | None]:
    """``host`` or ``host:port`` (``[v6]:port`` for IPv6) as ``(host, port)``.

    Raises:
        EgressError: not a host, a bad port, or a wildcard.
    """
    text = entry.strip().lower()
    parts = urlsplit(f"//{text}")
    try:
        host, port = parts.hostname, parts.port
    except ValueError as exc:
        raise EgressError(f"browser allowed host {entry!r}: {exc}") from None
    if not host or "*" in text or parts.path or parts.query or parts.username:
        raise EgressError(f"browser allowed host {entry!r} is not 'host' or 'host:port'")
    return host, port


def blocked_range(address: IPAddress) -> str | None:
    """Why ``address`` may not be reached through a name (``loopback``, ``private`` …), or
    None for a public address."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return blocked_range(address.ipv4_mapped)
    for label, hit in (
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("private", address.is_private),
        ("multicast", address.is_multicast),
        ("unspecified", address.is_unspecified),
        ("reserved", address.is_reserved),
    ):
        if hit:
            return label
    return None


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


async def resolve_addresses(host: str) -> list[IPAddress]:
    """Every address ``host`` resolves to (raises OSError when it does not)."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    return [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]


async def resolve_allowed(entries: tuple[str, ...]) -> tuple[list[AllowedHost], list[str]]:
    """Resolve the installation's entries: the usable ones, and a note per refused one.

    Raises:
        EgressError: an entry is malformed (a configuration error, not a DNS answer).
    """
    allowed: list[AllowedHost] = []
    notes: list[str] = []
    for entry in entries:
        host, port = parse_entry(entry)
        literal = _literal(host)
        if literal is not None:
            allowed.append(AllowedHost(host, port, str(literal)))
            continue
        try:
            addresses = await resolve_addresses(host)
        except OSError as exc:
            notes.append(f"{entry}: does not resolve ({exc})")
            continue
        bad = [f"{a} ({why})" for a in addresses if (why := blocked_range(a)) is not None]
        if bad or not addresses:
            notes.append(f"{entry}: resolves to {', '.join(bad) or 'nothing'}; not allowed")
            continue
        v4 = [a for a in addresses if a.version == 4]
        allowed.append(AllowedHost(host, port, str((v4 or addresses)[0])))
    return allowed, notes


def resolver_rules(allowed: list[AllowedHost]) -> str:
    """Chromium's ``--host-resolver-rules``: each allowed entry pinned, everything else
    ``~NOTFOUND`` (first match wins)."""
    rules = []
    for item in allowed:
        target = f"[{item.address}]" if ":" in item.address else item.address
        if item.port is not None:
            target = f"{target}:{item.port}"
        rules.append(f"MAP {item.pattern} {target}")
    return ", ".join([*rules, "MAP * ~NOTFOUND"])


def check_url(url: str, allowed: list[AllowedHost], notes: list[str]) -> None:
    """Raise unless the browser may open ``url``.

    Raises:
        EgressError: names the host and why (not listed; loopback/private …; refused entry).
    """
    parts = urlsplit(url)
    if parts.scheme in _LOCAL_SCHEMES:
        return
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise EgressError(f"{url!r}: only http(s), about: and data: URLs may be opened")
    host = parts.hostname.lower()
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise EgressError(f"{url!r}: {exc}") from None
    if any(a.host == host and a.port in (None, port) for a in allowed):
        return
    literal = _literal(host)
    why = blocked_range(literal) if literal is not None else None
    kind = f"a {why} address" if why else "a host"
    refused = [n for n in notes if n.startswith(host)]
    detail = f" ({'; '.join(refused)})" if refused else ""
    raise EgressError(
        f"{host}:{port} is {kind} not in the installation's browser allowed hosts"
        f" (BENCHBOOK_BROWSER_ALLOWED_HOSTS){detail}"
    )


__all__ = [
    "AllowedHost",
    "EgressError",
    "blocked_range",
    "check_url",
    "parse_entry",
    "resolve_addresses",
    "resolve_allowed",
    "resolver_rules",
]
