"""The FastAPI application: ``create_app(settings)`` wires engine, errors and routers.

OpenAPI lives at ``/api/openapi.json`` and interactive docs at ``/api/docs``. Every route's
``operationId`` is the name of the service operation it exposes (``services.registry``).
"""

from __future__ import annotations

from typing import Any

from fastapi import Depends, FastAPI, Request
from pydantic import BaseModel
from sqlalchemy import Engine

import benchbook
from benchbook.api import (
    accounts,
    benchmarks,
    comments,
    datasets,
    harnesses,
    hf,
    jobs,
    keys,
    members,
    recipes,
    runs,
    secrets,
)
from benchbook.api.deps import request_text
from benchbook.api.errors import install_error_handlers
from benchbook.api.limits import BodyLimits
from benchbook.contracts import Dataset
from benchbook.contracts.imports import ImportRequest
from benchbook.mcp.server import mount_mcp
from benchbook.services.context import open_engine
from benchbook.services.throttle import LoginThrottle
from benchbook.settings import Settings, get_settings
from benchbook.web import mount_web


class Health(BaseModel):
    """``GET /api/health``: liveness, the package version and the database backend."""

    status: str
    version: str
    database: str


#: Request bodies read from the raw stream (not declared as parameters), added to OpenAPI.
RAW_BODY_MODELS: tuple[type[BaseModel], ...] = (Dataset, ImportRequest)


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


def create_app(settings: Settings | None = None, engine: Engine | None = None) -> FastAPI:
    """Build the HTTP API.

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
        docs_url="/api/docs",
        redoc_url=None,
        dependencies=[Depends(request_text)],
    )
    app.state.settings = settings
    app.state.engine = engine if engine is not None else open_engine(settings)
    app.state.login_throttle = LoginThrottle.from_settings(settings)
    install_error_handlers(app)
    app.include_router(datasets.router)
    app.include_router(hf.router)
    app.include_router(benchmarks.router)
    app.include_router(recipes.router)
    app.include_router(jobs.router)
    app.include_router(harnesses.router)
    app.include_router(runs.router)
    app.include_router(accounts.router)
    for router in (comments.router, secrets.router, keys.router, members.router):
        app.include_router(router)
    app.add_middleware(BodyLimits)
    mount_web(app)

    @app.get("/api/health", operation_id="get_health", response_model=Health, tags=["meta"])
    def health(request: Request) -> Health:
        """Liveness: ``{status: "ok", version, database: "sqlite" | "postgresql"}``."""
        eng: Engine = request.app.state.engine
        return Health(status="ok", version=benchbook.__version__, database=eng.dialect.name)

    app.openapi = lambda: _openapi_with_bodies(app)  # type: ignore[method-assign]
    mount_mcp(app)  # MCP over streamable HTTP at /mcp, run by the app's lifespan
    return app
