"""Model endpoints (issue 27 item 3): the only URLs a judge or an ``openai`` harness may call.

Admins register an endpoint for their workspace (``endpoints:write``) or, as installation
admins, for every workspace (``shared`` → ``_shared``). A ``base_url`` is allowed when it is a
registered endpoint's URL or below it (same scheme, host and port; path under the endpoint's).
:func:`check_base_url` is what ``start_run``, ``rescore_run`` and ``report_run`` call.
"""

from __future__ import annotations

import re

from sqlalchemy import Connection

from benchbook.contracts.registered import Endpoint
from benchbook.errors import Conflict, Forbidden, InvalidInput, NotFound
from benchbook.runtime.egress import endpoint_matches, normalize_endpoint, path_problem
from benchbook.services.context import Context
from benchbook.store import endpoints as repo
from benchbook.store.tables import SHARED_WORKSPACE

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


def _endpoint(workspace: str, name: str, url: str, created_by: str) -> Endpoint:
    return Endpoint(
        workspace=workspace,
        name=name,
        url=url,
        shared=workspace == SHARED_WORKSPACE,
        created_by=created_by,
    )


def add_endpoint(ctx: Context, name: str, url: str, shared: bool = False) -> Endpoint:
    """Register a model endpoint ``name`` → ``url`` (an http(s) API root such as
    ``https://api.openai.com/v1``; stored without a trailing slash).

    Raises:
        Forbidden: without ``endpoints:write`` (admins), or ``shared`` without publish rights.
        InvalidInput: a bad name, or a URL that is not http(s) with a host (or carries a
            query, fragment or credentials).
        Conflict: the name is taken in that workspace.
    """
    ctx.require("endpoints:write")
    workspace = ctx.target_workspace(shared)
    if not NAME_RE.fullmatch(name):
        raise InvalidInput(
            "endpoint name must be 1-128 characters of [A-Za-z0-9_.-], starting with a letter"
            " or digit",
            {"errors": [{"path": "name", "message": "invalid endpoint name"}]},
        )
    try:
        normalized = normalize_endpoint(url)
    except ValueError as exc:
        problem = {"path": "url", "message": str(exc)}
        raise InvalidInput(f"url: {exc}", {"errors": [problem]}) from exc
    with ctx.engine.begin() as conn:
        if any(n == name for _, n, _, _ in repo.list_endpoints(conn, [workspace])):
            raise Conflict(
                f"endpoint {name!r} already exists in {workspace}; remove it first",
                {"name": name, "workspace": workspace},
            )
        repo.insert_endpoint(conn, workspace, name, normalized, ctx.principal.user_id)
    return _endpoint(workspace, name, normalized, ctx.principal.user_id)


def list_endpoints(ctx: Context) -> list[Endpoint]:
    """The workspace's endpoints and the installation's (``_shared``), by workspace and name."""
    ctx.require("endpoints:read")
    with ctx.engine.connect() as conn:
        rows = repo.list_endpoints(conn, _tiers(ctx.workspace))
    return [_endpoint(*r) for r in rows]


def remove_endpoint(ctx: Context, name: str, shared: bool = False) -> None:
    """Remove an endpoint; runs already stored keep their plans (new runs are checked).

    Raises:
        Forbidden: without ``endpoints:write``. NotFound: no endpoint of that name there.
    """
    ctx.require("endpoints:write")
    workspace = ctx.target_workspace(shared)
    with ctx.engine.begin() as conn:
        if not repo.delete_endpoint(conn, workspace, name):
            raise NotFound(f"endpoint {name!r} not found in {workspace}", {"name": name})


def _tiers(workspace: str) -> list[str]:
    return [workspace] if workspace == SHARED_WORKSPACE else [workspace, SHARED_WORKSPACE]


def registered_urls(conn: Connection, workspace: str) -> list[str]:
    """The endpoint URLs ``workspace`` may call (its own and the installation's)."""
    return [url for _, _, url, _ in repo.list_endpoints(conn, _tiers(workspace))]


def check_base_url(urls: list[str], base_url: str, path: str) -> None:
    """Refuse a ``base_url`` no registered endpoint covers.

    Raises:
        InvalidInput: the URL's path has a ``.``/``..`` segment, a backslash or an encoded dot,
            slash or backslash (it could walk out of an endpoint); names ``path``.
        Forbidden: naming ``path`` (``graders[0].config.base_url``) and the URL.
    """
    problem = path_problem(base_url)
    if problem is not None:
        raise InvalidInput(
            f"{path}: {problem}", {"errors": [{"path": path, "message": problem}], "url": base_url}
        )
    if any(endpoint_matches(u, base_url) for u in urls):
        return
    raise Forbidden(
        f"{path}: {base_url} is not a registered model endpoint; an admin registers it with"
        f" `benchbook endpoints add NAME {base_url}`",
        {"path": path, "url": base_url},
    )
