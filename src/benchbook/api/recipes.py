"""Recipe routes (SPEC D, E.6): register, validate, list and get registered recipes.

Each route's ``operation_id`` is the service function's name (``services.registry.OPERATIONS``).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body

from benchbook.api import registered
from benchbook.api.deps import ContextDep
from benchbook.api.errors import error_responses
from benchbook.contracts import Recipe
from benchbook.contracts.jobs import RecipeRegisterResult, RecipeSummary, RecipeValidationReport
from benchbook.services import recipes as svc
from benchbook.transports import nouns

router = APIRouter(prefix="/api/recipes", tags=["recipes"])

RECIPES = registered.NounRoutes(
    ops=nouns.RECIPES,
    path="",
    model=Recipe,
    result=RecipeRegisterResult,
    summary=RecipeSummary,
    docs={
        "register": (
            "Register a recipe version (immutable): 201 when stored, 200 when the identical"
            " version\nalready existed (``created`` false), 409 naming ``id@version`` when it"
            " exists with other\ncontent, 400 for an invalid recipe (``javascript:`` origin"
            " links included)."
        ),
        "list": "Recipes the caller sees: own ids plus ``_shared`` ids not shadowed by own ones.",
        "get": (
            "One recipe version (exact SemVer or ``latest``); ``version`` in the body is resolved."
        ),
    },
)
registered.add_register(router, RECIPES)


@router.post(
    "/validate",
    operation_id="validate_recipe",
    response_model=RecipeValidationReport,
    responses=error_responses(400, 403),
)
def validate_recipe(
    ctx: ContextDep, payload: Annotated[dict[str, Any], Body()], shared: registered.Shared = False
) -> RecipeValidationReport:
    """Dry-run a register: ``{ok, errors: [{path, message}], existing_versions, version_exists,
    would_conflict, identical}``. Writes nothing; an invalid recipe is ``ok: false`` (200)."""
    return svc.validate_recipe(ctx, payload, shared)


registered.add_list(router, RECIPES)
registered.add_get(router, RECIPES)
