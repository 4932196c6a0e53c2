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
from sqlalchemy import Connection
from sqlalchemy.exc import IntegrityError

from benchbook.contracts import Provenance, Recipe
from benchbook.contracts.jobs import RecipeRegisterResult, RecipeSummary, RecipeValidationReport
from benchbook.contracts.registry import ValidationIssue, VersionInfo
from benchbook.datasets.identity import canonical_json, sha256_hex
from benchbook.datasets.templates import compile_template
from benchbook.datasets.versions import LATEST, is_semver, parse_version, pick_latest, sort_versions
from benchbook.errors import Conflict, NotFound
from benchbook.services.context import Context
from benchbook.services.validation import issues_of, parse_model
from benchbook.store import dataset_owners
from benchbook.store import datasets as dataset_repo
from benchbook.store import recipes as repo
from benchbook.store.tables import SHARED_WORKSPACE


def parse_recipe(payload: Any) -> Recipe:
    """Validate a recipe body; InvalidInput lists every problem by path (a ``javascript:``
    origin link is ``origin.homepage``)."""
    return parse_model(Recipe, payload, "recipe")


def recipe_identity(recipe: Recipe) -> tuple[str, str]:
    """``(canonical JSON text, sha256 hex)`` of a parsed recipe."""
    body = canonical_json(recipe.model_dump(mode="json"))
    return body.decode("utf-8"), sha256_hex(body)


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
    ctx.require("recipes:write")
    workspace = ctx.target_workspace(shared)
    parse_version(recipe.version)
    check_row_templates(recipe)
    body, digest = recipe_identity(recipe)
    key = f"{recipe.id}@{recipe.version}"
    try:
        with ctx.engine.begin() as conn:
            existing = repo.find_recipe(conn, workspace, recipe.id, recipe.version)
            if existing is None:
                repo.insert_recipe(
                    conn,
                    workspace=workspace,
                    recipe_id=recipe.id,
                    version=recipe.version,
                    is_prerelease=bool(parse_version(recipe.version).prerelease),
                    body=body,
                    content_hash=digest,
                    created_by=ctx.principal.user_id,
                )
    except IntegrityError as exc:  # a concurrent register of the same key won the race
        raise Conflict(f"recipe {key} was registered concurrently; retry") from exc
    if existing is not None and existing.content_hash != digest:
        raise Conflict(
            f"recipe {key} already exists with different content; register a new version",
            {"id": recipe.id, "version": recipe.version},
        )
    return RecipeRegisterResult(
        workspace=workspace,
        id=recipe.id,
        version=recipe.version,
        created=existing is None,
        content_hash=digest,
    )


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
        versions = repo.recipe_versions(conn, workspace, recipe.id)
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


def _owner(conn: Connection, workspace: str, recipe_id: str) -> str:
    if repo.count_versions(conn, workspace, recipe_id):
        return workspace
    if workspace != SHARED_WORKSPACE and repo.count_versions(conn, SHARED_WORKSPACE, recipe_id):
        return SHARED_WORKSPACE
    raise NotFound(f"recipe {recipe_id!r} not found", {"id": recipe_id})


def get_recipe(ctx: Context, recipe_id: str, version: str = LATEST) -> Recipe:
    """One recipe version: exact SemVer or ``latest`` (highest release, else prerelease).

    Reads the caller's workspace, falling back to ``_shared`` per id. The returned recipe's
    ``version`` is always the resolved one, never ``latest``.

    Raises:
        NotFound: unknown id, or no such version for the owner.
    """
    ctx.require("recipes:read")
    with ctx.engine.connect() as conn:
        owner = _owner(conn, ctx.workspace, recipe_id)
        if version == LATEST:
            rows = repo.recipe_versions(conn, owner, recipe_id)
            top = pick_latest(r.version for r in rows)
            row = next((r for r in rows if r.version == top), None)
        else:
            row = repo.find_recipe(conn, owner, recipe_id, version) if is_semver(version) else None
    if row is None:
        raise NotFound(
            f"recipe {recipe_id}@{version} not found", {"id": recipe_id, "version": version}
        )
    return Recipe.model_validate_json(row.body)


def list_recipes(ctx: Context, search: str | None = None) -> list[RecipeSummary]:
    """Recipes visible to the caller: own ids plus ``_shared`` ids not shadowed by own ones,
    sorted by id. ``search`` matches id and description (case-insensitive substring)."""
    ctx.require("recipes:read")
    with ctx.engine.connect() as conn:
        rows = repo.recipes_in(conn, [ctx.workspace, SHARED_WORKSPACE])
    by_key: dict[tuple[str, str], list[repo.RecipeRow]] = {}
    for r in rows:
        by_key.setdefault((r.workspace, r.recipe_id), []).append(r)
    own = {rid for ws, rid in by_key if ws == ctx.workspace}
    out = []
    for (ws, rid), versions in sorted(by_key.items(), key=lambda kv: kv[0][1]):
        if ws != ctx.workspace and rid in own:
            continue
        summary = _summary(ws, rid, versions)
        needle = (search or "").lower()
        if needle and needle not in f"{rid}\n{summary.description or ''}".lower():
            continue
        out.append(summary)
    return out


def _summary(workspace: str, recipe_id: str, versions: list[repo.RecipeRow]) -> RecipeSummary:
    latest = pick_latest(v.version for v in versions)
    top = next(v for v in versions if v.version == latest)
    recipe = Recipe.model_validate_json(top.body)
    return RecipeSummary(
        workspace=workspace,
        id=recipe_id,
        shared=workspace == SHARED_WORKSPACE,
        latest=top.version,
        versions=sort_versions(v.version for v in versions),
        description=recipe.description,
        category=recipe.category,
        source_kind=recipe.source.kind,
        created_by=top.created_by,
        updated_at=max(v.created_at for v in versions),
    )


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
