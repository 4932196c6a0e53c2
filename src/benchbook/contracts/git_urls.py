"""What a git repository URL of a ``repo`` case may name (issue 27).

Its host and path become directories of the mirror cache (``<mirrors>/<host>/<owner>/<name>.git``,
``runtime/environments/repo.py``), so a host of ``..`` or ``.``, an empty label or path step, or
a ``.``/``..`` step would walk out of that cache (a host of ``..`` wrote a lock file into the
data directory). Checked where a case is validated and again where the path is joined.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator

from benchbook.contracts.common import PY_SPACE_CHARS, schema_rule

_LABEL_RE = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_STEP_RE = r"[A-Za-z0-9_][A-Za-z0-9_.-]*"
_LABEL = re.compile(rf"^{_LABEL_RE}$")
_STEP = re.compile(rf"^{_STEP_RE}$")
_GIT_URL = (
    rf"[Hh][Tt][Tt][Pp][Ss]?://{_LABEL_RE}(?:\.{_LABEL_RE})*(?::[0-9]{{1,5}})?(?:/{_STEP_RE})+/?"
)
GIT_URL_PATTERN = rf"^[{PY_SPACE_CHARS}]*{_GIT_URL}[{PY_SPACE_CHARS}]*$"
"""The JSON Schema spelling of what :data:`GitUrl` accepts (surrounding spaces are trimmed)."""


def host_problem(host: str) -> str | None:
    """Why ``host`` (a name or IP address, without port) cannot name a git host, or None."""
    try:
        ipaddress.ip_address(host.strip("[]"))
        return None
    except ValueError:
        pass
    if not host or not all(_LABEL.match(p) for p in host.split(".")):
        return (
            f"host {host[:80]!r} is not a host name (dot-separated labels of letters, digits"
            " and '-') or an IP address"
        )
    return None


def git_url_problem(url: str) -> str | None:
    """Why ``url`` cannot name a repository to mirror, or None: an ``http(s)`` URL whose host
    is dot-separated labels (an IPv4 address is one) and whose path is one or more steps of
    ``[A-Za-z0-9_.-]`` not starting with ``.`` or ``-`` (so never ``.``, ``..`` or empty), with
    no user, query or fragment: exactly :data:`GIT_URL_PATTERN` without the spaces."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return f"{url[:200]!r} is not an http(s) URL"
    problem = host_problem(parts.hostname or "")
    if problem is not None:
        return problem
    steps = parts.path.removesuffix("/").split("/")[1:]
    if not steps or not all(_STEP.match(s) for s in steps) or steps[-1] == ".git":
        return (
            f"repository path {parts.path[:200]!r} must be steps like /owner/name.git: letters,"
            " digits, '_', '.', '-', none empty or starting with '.' or '-'"
        )
    if not re.fullmatch(_GIT_URL, url):
        return f"{url[:200]!r} must be http(s)://host[:port]/owner/name(.git), nothing else"
    return None


def _check_git_url(value: str) -> str:
    url = value.strip()
    problem = git_url_problem(url)
    if problem is not None:
        raise ValueError(problem)
    return url


GitUrl = Annotated[str, AfterValidator(_check_git_url), schema_rule(pattern=GIT_URL_PATTERN)]
"""A repository URL to mirror: ``http(s)://host[:port]/step/…``, host labels and path steps of
letters, digits and ``-`` (``_ . -`` in steps, none starting with ``.`` or ``-``), no query,
fragment or user; an IPv4 address is a host, an IPv6 literal is not."""
