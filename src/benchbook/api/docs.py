"""``/api/docs``: interactive API docs that work offline, and the OpenAPI security schemes.

Swagger UI's files come from the ``fastapi-offline`` package and are served by Benchbook at
``/api/docs/assets`` (with ``/api/docs/docs.js``, this package's start-up script), so the page
loads nothing from the internet. :func:`add_security_schemes` declares how the API
authenticates: an API key as ``Authorization: Bearer bb_…`` (``bearer``) or the dashboard's
session cookie ``benchbook_session`` (``session``); an installation without users answers
without either (the local admin), which the document's ``security`` lists as ``{}``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import fastapi_offline
from fastapi import FastAPI
from fastapi.responses import FileResponse, HTMLResponse
from fastapi.staticfiles import StaticFiles

from benchbook.transports.auth import SESSION_COOKIE

HERE = Path(__file__).parent / "static"
#: Swagger UI 5 (``swagger-ui-dist@5``: OpenAPI 3.1, which FastAPI writes), as the
#: ``fastapi-offline`` package ships it; only its files are used, not its app class.
SWAGGER_UI = Path(fastapi_offline.__file__).parent / "static"
DOCS_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Benchbook API</title>
<link rel="stylesheet" href="/api/docs/assets/swagger-ui.css">
<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
<meta name="color-scheme" content="light">
<script src="/api/docs/assets/swagger-ui-bundle.js" defer></script>
<script src="/api/docs/docs.js" defer></script>
</head>
<body><div id="swagger-ui"></div></body>
</html>
"""
SECURITY_SCHEMES = {
    "bearer": {
        "type": "http",
        "scheme": "bearer",
        "description": "An API key (`bb_…`, from `benchbook keys create` or the Account page) "
        "as `Authorization: Bearer bb_…`.",
    },
    "session": {
        "type": "apiKey",
        "in": "cookie",
        "name": SESSION_COOKIE,
        "description": "The dashboard's session cookie (`POST /login` with the login form).",
    },
}


def add_security_schemes(schema: dict[str, Any]) -> None:
    """Declare the Bearer and cookie schemes in ``schema`` and require either by default
    (``{}``: an installation without users, where the local admin needs neither)."""
    schema.setdefault("components", {})["securitySchemes"] = SECURITY_SCHEMES
    schema["security"] = [{"bearer": []}, {"session": []}, {}]


def mount_docs(app: FastAPI) -> None:
    """Serve ``/api/docs`` (the page), ``/api/docs/docs.js`` and ``/api/docs/assets/*``
    (Swagger UI); the app is built with ``docs_url=None``."""

    @app.get("/api/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return HTMLResponse(DOCS_PAGE)

    @app.get("/api/docs/docs.js", include_in_schema=False)
    def docs_script() -> FileResponse:
        return FileResponse(HERE / "docs.js", media_type="text/javascript")

    app.mount("/api/docs/assets", StaticFiles(directory=str(SWAGGER_UI)), name="api-docs")
