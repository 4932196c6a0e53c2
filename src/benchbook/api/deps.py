"""The HTTP API's request → ``Context``: routes depend on :func:`get_context` (``ContextDep``).

Who is asking is decided once for every transport in ``transports/auth.py``
(:func:`~benchbook.transports.auth.request_principal`: API key, else session cookie with its
CSRF header on writes, else the local admin while the installation has no users).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from pydantic import BaseModel, ConfigDict

from benchbook.services.context import Context
from benchbook.transports.auth import app_engine, app_settings, request_principal


def get_context(request: Request) -> Context:
    """The caller's ``Context`` (principal + engine + settings) for this request.

    Raises Unauthenticated (401) for missing, invalid, expired or revoked credentials and
    Forbidden (403) for a cookie-authenticated write without the session's CSRF token.
    """
    engine, settings = app_engine(request), app_settings(request)
    return Context(
        principal=request_principal(request, engine, settings), engine=engine, settings=settings
    )


ContextDep = Annotated[Context, Depends(get_context)]
"""Route parameter type: ``ctx: ContextDep``."""


class RequestBody(BaseModel):
    """Base of the API's own request bodies. Unknown members are ignored, as the document
    allows; booleans are declared ``StrictBool`` (lax ``bool`` would take ``0``, which the
    document calls no boolean), while integers stay lax (``5.0`` is an integer in JSON
    Schema)."""

    model_config = ConfigDict(extra="ignore")
