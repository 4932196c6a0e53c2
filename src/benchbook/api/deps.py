"""Principal resolution for HTTP: the ONE place a request becomes a ``Context``.

Until accounts and API keys exist, every request acts as the local admin of the ``default``
workspace (SPEC C: "until accounts exist, the local server acts as the admin"). The accounts work
replaces :func:`get_context` only; routes depend on it through ``ContextDep``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy import Engine

from benchbook.services.context import Context, local_admin_context
from benchbook.settings import Settings


def app_engine(request: Request) -> Engine:
    """The engine ``create_app`` opened (``app.state.engine``)."""
    engine: Engine = request.app.state.engine
    return engine


def app_settings(request: Request) -> Settings:
    """The settings ``create_app`` was built with (``app.state.settings``)."""
    settings: Settings = request.app.state.settings
    return settings


def get_context(request: Request) -> Context:
    """The caller's ``Context`` (principal + engine + settings) for this request.

    Today: the local admin of ``default``. Later: a session cookie or ``Authorization: Bearer
    bb_…`` resolved to a principal, raising ``Unauthenticated`` (401) when absent or invalid.
    """
    return local_admin_context(app_engine(request), app_settings(request))


ContextDep = Annotated[Context, Depends(get_context)]
"""Route parameter type: ``ctx: ContextDep``."""
