"""Recipe operations (SPEC A Recipe, D, E.6): register, validate, list and get recipes.

A recipe is an adapter spec (source + mapping + grader templates + provenance) kept per
workspace or in ``_shared``, immutable and versioned exactly like datasets: its identity is the
SHA-256 of its canonical JSON (the parsed model with defaults filled, keys sorted); registering
the same ``id@version`` again with identical content is a no-op and with different content a
Conflict. Owner resolution is per id: a workspace holding any version of an id owns it and its
``_shared`` versions are hidden. ``latest`` is the highest release by SemVer precedence.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from benchbook.contracts import Provenance, Recipe
from benchbook.contracts.jobs import RecipeRegisterResult, RecipeSummary, RecipeValidationReport
from benchbook.contracts.registry import ValidationIssue, VersionInfo
from benchbook.datasets.templates import compile_template
from benchbook.datasets.versions import LATEST, parse_version, sort_versions
from benchbook.services import registered
from benchbook.services.context import Context
from benchbook.services.validation import issues_of, parse_model
from benchbook.store import dataset_owners
from benchbook.store import datasets as dataset_repo
from benchbook.store import recipes as repo


def parse_recipe(payload: Any) -> Recipe:
    """Validate a recipe body; InvalidInput lists every problem by path (a ``javascript:``
    origin link is ``origin.homepage``)."""
    return parse_model(Recipe, payload, "recipe")


def check_row_templates(recipe: Recipe) -> None:
    """The mapping's row templates compile, as ``contracts.recipe.ROW_TEMPLATE_PATTERN`` says.

    Raises:
        InvalidInput: an unmatched brace or an empty placeholder, naming the field.
    """
    m = recipe.mapping
    texts = {"mapping.task_template": m.task_template, "mapping.image": m.image}
    texts |= {f"mapping.files_template.{p}": t for p, t in (m.files_template or {}).items()}
    for where, text in texts.items():
        if text is not None:
            compile_template(text, where)


def _check_recipe(_ctx: Context, recipe: Recipe) -> None:
    parse_version(recipe.version)
    check_row_templates(recipe)


RECIPE: registered.Noun[Recipe] = registered.Noun(
    name="recipe",
    model=Recipe,
    title="recipe",
    store=repo.RECIPES,
    check=_check_recipe,
)
"""The recipe noun: its own ``recipes`` table, versions never tombstoned."""

recipe_identity = registered.identity
"""``(canonical JSON text, sha256 hex)`` of a parsed recipe."""


def register_recipe(ctx: Context, recipe: Recipe, shared: bool = False) -> RecipeRegisterResult:
    """Register a recipe version (immutable).

    Args:
        recipe: the parsed recipe; its ``id`` and ``version`` (SemVer) key it.
        shared: publish into ``_shared`` (installation admins only).

    Returns:
        ``{workspace, id, version, created, content_hash}``; ``created`` is False when the
        identical version already existed.

    Raises:
        Forbidden: without ``recipes:write`` (or ``shared`` without publish rights).
        InvalidInput: a row template that does not compile (:func:`check_row_templates`).
        Conflict: the version exists with different content (names ``id@version``).
    """
    result = registered.register(ctx, RECIPE, recipe, shared)
    return registered.as_result(RecipeRegisterResult, result)


def validate_recipe(
    ctx: Context, payload: dict[str, Any], shared: bool = False
) -> RecipeValidationReport:
    """Dry-run a register: schema errors by path, existing versions, whether it would conflict.

    Writes nothing. An invalid body comes back as ``ok`` False with ``errors``.
    """
    ctx.require("recipes:write")
    try:
        recipe = Recipe.model_validate(payload)
    except ValidationError as exc:
        issues = [ValidationIssue(**i) for i in issues_of(exc)]
        return RecipeValidationReport(ok=False, errors=issues)
    workspace = ctx.target_workspace(shared)
    with ctx.engine.connect() as conn:
        versions = repo.RECIPES.live_versions(conn, workspace, recipe.id)
    report = RecipeValidationReport(
        ok=True, existing_versions=sort_versions(v.version for v in versions)
    )
    existing = next((v for v in versions if v.version == recipe.version), None)
    if existing is not None:
        same = existing.content_hash == recipe_identity(recipe)[1]
        report.version_exists, report.identical, report.would_conflict = True, same, not same
        if not same:
            report.ok = False
            message = f"{recipe.id}@{recipe.version} exists with different content"
            report.errors.append(ValidationIssue(path="version", message=message))
    return report


def get_recipe(ctx: Context, recipe_id: str, version: str = LATEST) -> Recipe:
    """One recipe version: exact SemVer or ``latest`` (highest release, else prerelease).

    Reads the caller's workspace, falling back to ``_shared`` per id. The returned recipe's
    ``version`` is always the resolved one, never ``latest``.

    Raises:
        NotFound: unknown id, or no such version for the owner.
    """
    return registered.get(ctx, RECIPE, recipe_id, version)


def list_recipes(ctx: Context, search: str | None = None) -> list[RecipeSummary]:
    """Recipes visible to the caller: own ids plus ``_shared`` ids not shadowed by own ones,
    sorted by id. ``search`` matches id and description (case-insensitive substring)."""
    return [
        RecipeSummary(
            **r.summary,
            category=r.item.category,
            source_kind=r.item.source.kind,
            created_by=r.top.created_by,
            updated_at=max(v.created_at for v in r.versions),
        )
        for r in registered.list_latest(ctx, RECIPE, search)
    ]


def list_recipe_datasets(ctx: Context, recipe_id: str) -> list[VersionInfo]:
    """Live dataset versions the caller can see that were imported from recipe ``recipe_id``
    (``produced_by.via == "recipe"`` and ``produced_by.id == recipe_id``), newest first.

    Own versions and ``_shared`` ones whose id the caller's workspace does not hold (the
    owner-first rule of ``store.dataset_owners``); ``produced_by.version`` names the recipe
    version each was made from. Not an operation of its own (no route, no tool): the recipe
    page lists these. Two statements for any number of versions.

    Raises:
        Forbidden: without ``datasets:read``.
    """
    ctx.require("datasets:read")
    with ctx.engine.connect() as conn:
        made = [
            (r, latest)
            for r, latest in dataset_owners.made_by_recipe(conn, ctx.workspace, recipe_id)
            if (r.produced_by or {}).get("via") == "recipe"
            and (r.produced_by or {}).get("id") == recipe_id
        ]
        tags = dataset_repo.tags_of_versions(conn, [r.pk for r, _ in made])
    return [
        VersionInfo(
            workspace=r.workspace,
            id=r.dataset_id,
            version=r.version,
            description=r.description,
            tags=r.tags,
            version_tags=tags.get(r.pk, []),
            produced_by=Provenance.model_validate(r.produced_by),
            cases=r.case_count,
            content_hash=r.content_hash,
            created_by=r.created_by,
            created_at=r.created_at,
            is_latest=latest,
        )
        for r, latest in sorted(made, key=lambda m: (m[0].created_at, m[0].pk), reverse=True)
    ]
