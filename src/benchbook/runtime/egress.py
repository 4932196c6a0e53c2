"""Where a model call may go, and which secret may go with it (issue 27 item 3).

Pure functions over URLs: :func:`normalize_endpoint` (how an endpoint is stored),
:func:`endpoint_matches` (a ``base_url`` is under a registered endpoint), :func:`host_of` and
:func:`secret_for` — the check made right before a model call: a secret is handed to a client
only for a URL whose host the secret is bound to. Services resolve secrets into a
:class:`BoundSecrets`; a plain mapping (a library caller's own values) is used as given.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from urllib.parse import urlsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}
#: Spellings a server may decode into a ``.``/``..`` segment or a ``/`` (``%2e``, ``%2f``,
#: ``%5c`` for ``\\``): a path holding one is refused, never normalised.
_ENCODED = ("%2e", "%2f", "%5c")


class SecretHostRefused(ValueError):
    """A secret was about to be sent to a host it is not bound to (message names both)."""


def path_problem(url: str) -> str | None:
    """Why the path of ``url`` could leave the endpoint it seems to be under, or None: a ``.``
    or ``..`` segment, a backslash, or a percent-encoded dot, slash or backslash. Such a path
    is refused rather than normalised (``/v1/../internal`` is not under ``/v1``)."""
    path = urlsplit(url.strip()).path
    lowered = path.lower()
    if any(seg in (".", "..") for seg in path.split("/")):
        return f"{url[:200]!r}: the path may not have '.' or '..' segments"
    if "\\" in path or any(code in lowered for code in _ENCODED):
        return f"{url[:200]!r}: the path may not hold a backslash or %2e, %2f, %5c"
    return None


def _parts(url: str) -> tuple[str, str, int, str]:
    """``(scheme, host, port, path without trailing slash)``. Raises ValueError (a path with
    ``..`` included, :func:`path_problem`)."""
    problem = path_problem(url)
    if problem is not None:
        raise ValueError(problem)
    split = urlsplit(url.strip())
    scheme = split.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not split.hostname:
        raise ValueError(f"{url!r} is not an http(s) URL with a host")
    if split.query or split.fragment or split.username or split.password:
        raise ValueError(f"{url!r}: an endpoint has no query, fragment or credentials")
    port = split.port or _DEFAULT_PORTS[scheme]
    return scheme, split.hostname.lower(), port, split.path.rstrip("/")


def normalize_endpoint(url: str) -> str:
    """The stored form of an endpoint URL: lower-case scheme and host, explicit port only when
    not the default, no trailing slash. Raises ValueError for anything but http(s) with a host."""
    scheme, host, port, path = _parts(url)
    netloc = host if port == _DEFAULT_PORTS[scheme] else f"{host}:{port}"
    if ":" in host:  # IPv6 literal
        netloc = f"[{host}]" if port == _DEFAULT_PORTS[scheme] else f"[{host}]:{port}"
    return f"{scheme}://{netloc}{path}"


def endpoint_matches(endpoint: str, base_url: str) -> bool:
    """True when ``base_url`` is ``endpoint`` or below it (same scheme, host and port; path
    equal or under the endpoint's path on a ``/`` boundary)."""
    try:
        a, b = _parts(endpoint), _parts(base_url)
    except ValueError:
        return False
    if a[:3] != b[:3]:
        return False
    return b[3] == a[3] or b[3].startswith(a[3] + "/")


def host_of(url: str) -> str:
    """``host`` or ``host:port`` (port only when not the scheme's default) of ``url``; the
    whole text when it is not an http(s) URL."""
    try:
        scheme, host, port, _ = _parts(url)
    except ValueError:
        return url
    return host if port == _DEFAULT_PORTS[scheme] else f"{host}:{port}"


def host_allowed(hosts: list[str] | frozenset[str], url: str) -> bool:
    """True when a bound host (``host`` — any port — or ``host:port``) covers ``url``."""
    try:
        _, host, port, _ = _parts(url)
    except ValueError:
        return False
    return host in hosts or f"{host}:{port}" in hosts


class BoundSecrets(Mapping[str, str]):
    """Secret values with the hosts each may be sent to: ``{name: (value, hosts)}``."""

    def __init__(self, values: Mapping[str, tuple[str, list[str]]]) -> None:
        self._values = dict(values)

    def __getitem__(self, name: str) -> str:
        return self._values[name][0]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def hosts(self, name: str) -> list[str]:
        """The hosts ``name`` may be sent to (``[]``: nowhere). Raises KeyError."""
        return self._values[name][1]


def refusal(name: str, hosts: list[str], url: str) -> str | None:
    """The refusal message when secret ``name`` bound to ``hosts`` may not go to ``url``."""
    if host_allowed(hosts, url):
        return None
    if not hosts:
        return (
            f"secret {name} is bound to no host, so it is sent nowhere: set it again with"
            f" its hosts (`benchbook secrets set {name} --host {host_of(url)}`, or"
            ' "hosts" in PUT /api/secrets/…)'
        )
    return f"secret {name} may not be sent to {host_of(url)} (bound to {', '.join(hosts)})"


def secret_for(secrets: Mapping[str, str], name: str, url: str) -> str:
    """The value of ``name`` to send to ``url``: checked against its hosts when ``secrets``
    carries them (:class:`BoundSecrets`, or any mapping with a ``hosts(name)`` method).

    Raises:
        KeyError: no such secret.
        SecretHostRefused: the secret is not bound to ``url``'s host.
    """
    value = secrets[name]
    hosts_of = getattr(secrets, "hosts", None)
    if hosts_of is not None:
        message = refusal(name, list(hosts_of(name)), url)
        if message is not None:
            raise SecretHostRefused(message)
    return value
