"""Routes of a versioned registered noun (issue 32): one helper mounts register, list, get and
delete for harnesses, recipes, graders and environment recipes.

``POST {path}`` registers (201 stored, 200 identical version existed), ``GET {path}`` lists
(``?search=``), ``GET {path}/{<noun>_id}/versions/{version}`` reads one version and ``DELETE``
of that path tombstones it. Each ``operation_id`` is the service function's name
(``services.registry.OPERATIONS``); the endpoint gets that name and the route's description as
its own, so the OpenAPI document reads as if each route were written out by hand.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Response
from pydantic import BaseModel

from benchbook.api.deps import ContextDep
from benchbook.api.errors import error_responses
from benchbook.contracts.registered import RegisteredSummary, RegisterResult
from benchbook.transports.nouns import NounOperations

Shared = Annotated[bool, Query(description="Write into the _shared tier (installation admins).")]
Search = Annotated[str | None, Query(description="Substring of id or description.")]

_KEYWORD = inspect.Parameter.POSITIONAL_OR_KEYWORD


@dataclass(frozen=True)
class NounRoutes:
    """What a noun's routes differ in.

    Attributes:
        ops: the noun and its service functions; the register body parameter is named
            ``ops.name`` (``harness``), the id path parameter ``{ops.name}_id``.
        path: the routes' path below the router's prefix (``""``, ``"/graders"``).
        model: the body and ``get`` response model (``Harness``, ``RegisteredGrader`` …).
        docs: route description by ``register``, ``list``, ``get``, ``delete``.
        result: the register and delete response model (default ``RegisterResult``).
        summary: one listed item's model (default ``RegisteredSummary``).
    """

    ops: NounOperations
    path: str
    model: Any
    docs: Mapping[str, str]
    result: type[BaseModel] = RegisterResult
    summary: type[BaseModel] = RegisteredSummary

    @property
    def body(self) -> str:
        return self.ops.name

    @property
    def id_param(self) -> str:
        return f"{self.body}_id"

    @property
    def version_path(self) -> str:
        return f"{self.path}/{{{self.id_param}}}/versions/{{version}}"


def _endpoint(
    fn: Callable[..., Any], doc: str, params: list[tuple[str, Any, Any]], call: Callable[..., Any]
) -> Callable[..., Any]:
    """An endpoint named after service function ``fn`` taking ``params`` ``(name, annotation,
    default)`` (``inspect.Parameter.empty``: required) and returning ``call(**arguments)``."""

    def endpoint(**arguments: Any) -> Any:
        return call(**arguments)

    endpoint.__name__ = endpoint.__qualname__ = fn.__name__
    endpoint.__doc__ = doc
    endpoint.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(n, _KEYWORD, annotation=a, default=d) for n, a, d in params]
    )
    return endpoint


_REQUIRED = inspect.Parameter.empty


def add_register(router: APIRouter, noun: NounRoutes) -> None:
    """``POST {path}``: 201 when stored, 200 when the identical version existed."""

    def call(ctx: Any, response: Response, shared: bool, **body: Any) -> Any:
        result = noun.ops.register(ctx, body[noun.body], shared)
        if not result.created:
            response.status_code = 200
        return result

    params = [
        ("ctx", ContextDep, _REQUIRED),
        ("response", Response, _REQUIRED),
        (noun.body, Annotated[noun.model, Body()], _REQUIRED),
        ("shared", Shared, False),
    ]
    router.add_api_route(
        noun.path,
        _endpoint(noun.ops.register, noun.docs["register"], params, call),
        methods=["POST"],
        operation_id=noun.ops.register.__name__,
        status_code=201,
        response_model=noun.result,
        responses={
            200: {"model": noun.result, "description": "identical version existed"},
            **error_responses(400, 403, 409),
        },
    )


def add_list(router: APIRouter, noun: NounRoutes) -> None:
    """``GET {path}?search=``."""
    list_ = noun.ops.list
    params = [("ctx", ContextDep, _REQUIRED), ("search", Search, None)]
    router.add_api_route(
        noun.path,
        _endpoint(list_, noun.docs["list"], params, lambda ctx, search: list_(ctx, search)),
        methods=["GET"],
        operation_id=list_.__name__,
        response_model=list[noun.summary],  # type: ignore[name-defined]
    )


def _version_route(
    router: APIRouter, noun: NounRoutes, fn: Callable[..., Any], kind: str, **route: Any
) -> None:
    """``{path}/{<noun>_id}/versions/{version}`` answered by ``fn(ctx, id, version)``."""
    params = [("ctx", ContextDep, _REQUIRED), (noun.id_param, str, _REQUIRED)]
    params.append(("version", str, _REQUIRED))

    def call(ctx: Any, version: str, **item: Any) -> Any:
        return fn(ctx, item[noun.id_param], version)

    endpoint = _endpoint(fn, noun.docs[kind], params, call)
    router.add_api_route(noun.version_path, endpoint, operation_id=fn.__name__, **route)


def add_get(router: APIRouter, noun: NounRoutes) -> None:
    """``GET {path}/{<noun>_id}/versions/{version}``: exact SemVer or ``latest``; 404."""
    _version_route(
        router,
        noun,
        noun.ops.get,
        "get",
        methods=["GET"],
        response_model=noun.model,
        responses=error_responses(404),
    )


def add_delete(router: APIRouter, noun: NounRoutes) -> None:
    """``DELETE {path}/{<noun>_id}/versions/{version}``: tombstone one exact version; 403,
    404."""
    delete = noun.ops.delete
    assert delete is not None
    _version_route(
        router,
        noun,
        delete,
        "delete",
        methods=["DELETE"],
        response_model=noun.result,
        responses=error_responses(403, 404),
    )


def mount(router: APIRouter, noun: NounRoutes) -> None:
    """Register, list, get and (when the noun has one) delete, in that order."""
    add_register(router, noun)
    add_list(router, noun)
    add_get(router, noun)
    if noun.ops.deletable:
        add_delete(router, noun)
