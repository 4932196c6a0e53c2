"""What a git repository URL of a ``repo`` case may name (issue 27).

Its host and path become directories of the mirror cache (``<mirrors>/<host>/<owner>/<name>.git``,
``runtime/environments/repo.py``), so a host of ``..`` or ``.``, an empty label or path step, or
a ``.``/``..`` step would walk out of that cache (a host of ``..`` wrote a lock file into the
data directory). Checked where a case is validated and again where the path is joined.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

_LABEL = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")
_STEP = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


def host_problem(host: str) -> str | None:
    """Why ``host`` (a name or IP address, without port) cannot name a git host, or None."""
    try:
        ipaddress.ip_address(host.strip("[]"))
        return None
    except ValueError:
        pass
    if not host or len(host) > 253 or not all(_LABEL.match(p) for p in host.split(".")):
        return (
            f"host {host[:80]!r} is not a host name (dot-separated labels of letters, digits"
            " and '-') or an IP address"
        )
    return None


def git_url_problem(url: str) -> str | None:
    """Why ``url`` cannot name a repository to mirror, or None: an ``http(s)`` URL whose host
    passes :func:`host_problem` and whose path is one or more steps of ``[A-Za-z0-9_.-]`` not
    starting with ``.`` or ``-`` (so never ``.``, ``..`` or empty), the last one not bare
    ``.git``."""
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
    return None
