"""Recipe pages: the list (search) and one recipe's spec with its versions and the datasets
imported from it (``services.recipes.list_recipe_datasets``)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from benchbook.services import recipes
from benchbook.web.errors import PageRoute
from benchbook.web.render import people, render
from benchbook.web.session import PageDep

router = APIRouter(route_class=PageRoute, include_in_schema=False)


@router.get("/recipes")
def list_page(request: Request, page: PageDep, q: str = "") -> Response:
    """Recipes visible to the caller (own and ``_shared``)."""
    found = recipes.list_recipes(page.ctx, search=q or None)
    return render(
        request, page, "recipes.html", nav="recipes", recipes=found, q=q, names=people(page)
    )


@router.get("/recipes/{recipe_id}")
def recipe_page(request: Request, page: PageDep, recipe_id: str, v: str = "latest") -> Response:
    """One recipe version: source, mapping, graders, origin; the version list; the dataset
    versions produced from any version of the recipe."""
    recipe = recipes.get_recipe(page.ctx, recipe_id, v)
    summary = next((r for r in recipes.list_recipes(page.ctx) if r.id == recipe_id), None)
    return render(
        request,
        page,
        "recipe.html",
        nav="recipes",
        recipe=recipe,
        versions=list(reversed(summary.versions)) if summary else [recipe.version],
        spec=recipe.model_dump(mode="json", exclude_none=True),
        produced=recipes.list_recipe_datasets(page.ctx, recipe_id),
        names=people(page),
    )
