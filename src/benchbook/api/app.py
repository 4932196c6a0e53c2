"""The HTTP API on the app ``benchbook.app.create_app`` composes: :func:`install_api` adds the
error envelope, the routers and the OpenAPI document.

OpenAPI lives at ``/api/openapi.json`` and interactive docs at ``/api/docs``. Every route's
``operationId`` is the name of the service operation it exposes (``services.registry``).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.routing import APIRoute
from pydantic import BaseModel
from sqlalchemy import Engine

import benchbook
from benchbook.api import (
    accounts,
    benchmarks,
    comments,
    datasets,
    endpoints,
    graders,
    harnesses,
    hf,
    history,
    jobs,
    keys,
    leaderboards,
    localization,
    members,
    recipes,
    run_imports,
    runs,
    secrets,
)
from benchbook.api.docs import add_security_schemes, mount_docs
from benchbook.api.document import add_shared_rules, literal_methods
from benchbook.api.errors import install_error_handlers
from benchbook.contracts import Dataset
from benchbook.contracts.imports import ImportRequest
from benchbook.contracts.run_imports import ImportInspectRequest, ImportLmEvalRequest


class Health(BaseModel):
    """``GET /api/health``: liveness, the package version and the database backend."""

    status: str
    version: str
    database: str


#: Request bodies read from the raw stream (not declared as parameters), added to OpenAPI.
RAW_BODY_MODELS: tuple[type[BaseModel], ...] = (
    Dataset,
    ImportRequest,
    ImportInspectRequest,
    ImportLmEvalRequest,
)


def _openapi_with_bodies(app: FastAPI) -> dict[str, Any]:
    """The generated schema plus the bodies the raw-body routes reference by ``$ref``."""
    if app.openapi_schema:
        return app.openapi_schema
    schema = FastAPI.openapi(app)
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    for model in RAW_BODY_MODELS:
        body = model.model_json_schema(ref_template="#/components/schemas/{model}")
        for name, sub in body.pop("$defs", {}).items():
            components.setdefault(name, sub)
        components.setdefault(model.__name__, body)
    _drop_422(schema)
    add_security_schemes(schema)
    add_shared_rules(schema)
    app.openapi_schema = schema
    return schema


def _drop_422(schema: dict[str, Any]) -> None:
    """Request validation answers 400 with the envelope (``api/errors.py``), never 422."""
    for item in schema.get("paths", {}).values():
        for op in item.values():
            responses = op.get("responses", {})
            if responses.pop("422", None) is not None:
                responses.setdefault("400", {"$ref": "#/components/responses/InvalidInput"})
    schemas = schema.get("components", {}).get("schemas", {})
    schemas.pop("HTTPValidationError", None)
    schemas.pop("ValidationError", None)
    schema["components"].setdefault("responses", {})["InvalidInput"] = {
        "description": "invalid_input",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
    }


#: Every router of the API, in routing order (a new noun's router goes here).
ROUTERS: tuple[APIRouter, ...] = (
    datasets.router,
    hf.router,
    benchmarks.router,
    recipes.router,
    jobs.router,
    harnesses.router,
    graders.router,
    endpoints.router,
    run_imports.router,
    runs.router,
    localization.router,
    localization.gold_router,
    leaderboards.router,
    history.router,
    accounts.router,
    comments.router,
    secrets.router,
    keys.router,
    members.router,
)


def install_api(app: FastAPI) -> None:
    """Add the HTTP API to ``app`` (built by ``benchbook.app.create_app``, which set
    ``app.state.engine`` and ``app.state.settings``): its error envelope, the routers of every
    noun, ``/api/health`` and the OpenAPI document with the raw-body models."""
    install_error_handlers(app)
    mount_docs(app)
    for router in ROUTERS:
        app.include_router(router)
    app.state.literal_methods = literal_methods(
        [
            (route.path, route.methods)
            for router in ROUTERS
            for route in router.routes
            if isinstance(route, APIRoute)
        ]
    )

    @app.get("/api/health", operation_id="get_health", response_model=Health, tags=["meta"])
    def health(request: Request) -> Health:
        """Liveness: ``{status: "ok", version, database: "sqlite" | "postgresql"}``."""
        eng: Engine = request.app.state.engine
        return Health(status="ok", version=benchbook.__version__, database=eng.dialect.name)

    app.openapi = lambda: _openapi_with_bodies(app)  # type: ignore[method-assign]
