"""Recipe routes (SPEC D, E.6): register, validate, list and get registered recipes.

Each route's ``operation_id`` is the service function's name (``services.registry.OPERATIONS``).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Response

from benchbook.api.deps import ContextDep
from benchbook.api.errors import error_responses
from benchbook.contracts import Recipe
from benchbook.contracts.jobs import RecipeRegisterResult, RecipeSummary, RecipeValidationReport
from benchbook.services import recipes as svc

router = APIRouter(prefix="/api/recipes", tags=["recipes"])

Shared = Annotated[bool, Query(description="Write into the _shared tier (installation admins).")]


@router.post(
    "",
    operation_id="register_recipe",
    status_code=201,
    response_model=RecipeRegisterResult,
    responses={
        200: {"model": RecipeRegisterResult, "description": "identical version existed"},
        **error_responses(400, 403, 409),
    },
)
def register_recipe(
    ctx: ContextDep, response: Response, recipe: Annotated[Recipe, Body()], shared: Shared = False
) -> RecipeRegisterResult:
    """Register a recipe version (immutable): 201 when stored, 200 when the identical version
    already existed (``created`` false), 409 naming ``id@version`` when it exists with other
    content, 400 for an invalid recipe (``javascript:`` origin links included)."""
    result = svc.register_recipe(ctx, recipe, shared)
    if not result.created:
        response.status_code = 200
    return result


@router.post(
    "/validate",
    operation_id="validate_recipe",
    response_model=RecipeValidationReport,
    responses=error_responses(400, 403),
)
def validate_recipe(
    ctx: ContextDep, payload: Annotated[dict[str, Any], Body()], shared: Shared = False
) -> RecipeValidationReport:
    """Dry-run a register: ``{ok, errors: [{path, message}], existing_versions, version_exists,
    would_conflict, identical}``. Writes nothing; an invalid recipe is ``ok: false`` (200)."""
    return svc.validate_recipe(ctx, payload, shared)


@router.get("", operation_id="list_recipes", response_model=list[RecipeSummary])
def list_recipes(
    ctx: ContextDep,
    search: Annotated[str | None, Query(description="Substring of id or description.")] = None,
) -> list[RecipeSummary]:
    """Recipes the caller sees: own ids plus ``_shared`` ids not shadowed by own ones."""
    return svc.list_recipes(ctx, search)


@router.get(
    "/{recipe_id}/versions/{version}",
    operation_id="get_recipe",
    response_model=Recipe,
    responses=error_responses(404),
)
def get_recipe(ctx: ContextDep, recipe_id: str, version: str) -> Recipe:
    """One recipe version (exact SemVer or ``latest``); ``version`` in the body is resolved."""
    return svc.get_recipe(ctx, recipe_id, version)
