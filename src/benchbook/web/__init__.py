"""The web dashboard (SPEC G): server-rendered Jinja2 pages over the same services as the API.

One router per noun (``datasets``, ``comments``, ``imports``, ``recipes``, ``accounts``,
``runs``); errors
(service errors, bad query values, unknown paths) become pages in ``web/errors.py``; static
CSS/JS are served from ``/static`` by the app itself, so no page loads anything from the
internet; every page carries a Content-Security-Policy without inline script and the other
security headers (``web/headers.py``). :func:`mount_web` adds all of it to the API app.
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from benchbook.web import (
    accounts,
    comments,
    compare,
    datasets,
    hf,
    imports,
    leaderboards,
    recipes,
    run_actions,
    runs,
)
from benchbook.web.errors import install_page_errors
from benchbook.web.headers import SecurityHeaders
from benchbook.web.render import STATIC_DIR


def mount_web(app: FastAPI) -> None:
    """Add the dashboard's pages, its JSON calls, ``/static`` and HTML error pages to ``app``
    (after ``api/errors.install_error_handlers``: routing errors outside ``/api`` and ``/mcp``
    become pages, see ``web/errors.install_page_errors``)."""
    routers = (datasets.router, comments.router, imports.router, imports.calls, hf.calls)
    for router in (*routers, runs.router, runs.calls, recipes.router):
        app.include_router(router)
    app.include_router(accounts.router)
    app.include_router(run_actions.router)
    app.include_router(compare.router)
    app.include_router(leaderboards.router)
    app.mount("/static", StaticFiles(directory=str(STATIC_DIR)), name="static")
    install_page_errors(app)
    app.add_middleware(SecurityHeaders)
