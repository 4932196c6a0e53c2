"""The ASGI application, composed above the transports (issue 9 item 7).

``api/``, ``mcp/`` and ``web/`` never import each other (import-linter ``independence``
contract); each adds itself to the app built here: the HTTP API and its OpenAPI document
(``api.app.install_api``), the dashboard (``web.mount_web``) and MCP over streamable HTTP
(``mcp.server.mount_mcp``). What they share — principal resolution and request bounds — lives
below them in ``transports/``. OpenAPI is at ``/api/openapi.json``, interactive docs at
``/api/docs``.
"""

from __future__ import annotations

from functools import partial

import anyio.to_thread
from fastapi import Depends, FastAPI
from sqlalchemy import Engine

import benchbook
from benchbook.api.app import install_api
from benchbook.api.document import literal_wins
from benchbook.mcp.server import mount_mcp, run_stdio
from benchbook.services.context import open_engine
from benchbook.services.throttle import LoginThrottle
from benchbook.settings import Settings, get_settings
from benchbook.transports.limits import BodyLimits, request_text
from benchbook.web import mount_web
from benchbook.web.render import warm_first_views


def create_app(settings: Settings | None = None, engine: Engine | None = None) -> FastAPI:
    """Build the whole server: HTTP API, dashboard and MCP on one engine.

    Args:
        settings: configuration (default: from the environment).
        engine: an already-migrated engine to use (tests); default opens the configured
            database and migrates it to head.
    """
    settings = settings or get_settings()
    app = FastAPI(
        title="Benchbook",
        version=benchbook.__version__,
        summary="Versioned evaluation datasets and the evaluations run on them.",
        openapi_url="/api/openapi.json",
        docs_url=None,  # api/docs.py serves /api/docs with its assets (offline)
        redoc_url=None,
        dependencies=[Depends(request_text), Depends(literal_wins)],
    )
    app.state.settings = settings
    app.state.engine = engine if engine is not None else open_engine(settings)
    app.state.login_throttle = LoginThrottle.from_settings(settings)
    install_api(app)  # first: the dashboard's error pages wrap the API's handlers
    app.add_middleware(BodyLimits)
    mount_web(app)
    mount_mcp(app)  # MCP over streamable HTTP at /mcp, run by the app's lifespan
    app.router.on_startup.append(warm_first_views)  # numpy, the compare page's templates
    app.router.on_startup.append(partial(limit_request_threads, settings.request_threads))
    return app


async def limit_request_threads(threads: int) -> None:
    """Run at most ``threads`` requests at once in this event loop's thread pool (anyio's
    default limiter, which Starlette and FastAPI run synchronous handlers through; its waiters
    are served first come, first served). See ``Settings.request_threads``."""
    anyio.to_thread.current_default_thread_limiter().total_tokens = threads


run_mcp_stdio = run_stdio
"""``benchbook mcp``: the MCP server on stdin/stdout (``mcp.server.run_stdio``)."""
