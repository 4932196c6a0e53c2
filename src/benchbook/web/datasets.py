"""Dataset pages: list, dataset (versions, lineage, cases, activity), case, diff, register,
the version-tags form's post and the delete dialog's post. Each handler calls
``services.datasets``; pages hold no rules.
"""

from __future__ import annotations

import contextlib
from typing import Annotated, Any, Literal
from urllib.parse import urlencode

import orjson
from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import RedirectResponse

from benchbook.contracts.registry import ValidationIssue, ValidationReport
from benchbook.contracts.run import DatasetRuns
from benchbook.errors import BenchbookError, InvalidInput, NotFound
from benchbook.services import datasets, runs
from benchbook.services.controls import may_delete_dataset_version, require_register
from benchbook.services.datasets import OwnerFilter, SortKey
from benchbook.transports.limits import UPLOAD_LIMIT, body_limit
from benchbook.web.errors import PageRoute
from benchbook.web.render import dataset_url, people, render
from benchbook.web.session import FormDep, Page, PageDep, form_list, form_text

router = APIRouter(route_class=PageRoute, include_in_schema=False)

LIST_PAGE = 50
FIRST_CASES = 5
CASE_PAGE = 50
DIFF_SHOWN = 200
OWNERS: tuple[OwnerFilter, ...] = ("all", "own", "shared")
SORTS: tuple[SortKey, ...] = ("name", "updated", "cases")


def _pick(value: str, allowed: tuple[Any, ...], default: Any) -> Any:
    return value if value in allowed else default


@router.get("/")
def home() -> Response:
    """The dashboard starts at the datasets list."""
    return RedirectResponse("/datasets", status_code=303)


@router.get("/datasets")
def list_page(
    request: Request,
    page: PageDep,
    q: str = "",
    owner: str = "all",
    sort: str = "name",
    offset: int = 0,
) -> Response:
    """Datasets list: search, owner filter, sort, stat strip, role-gated buttons."""
    owner_f: OwnerFilter = _pick(owner, OWNERS, "all")
    sort_k: SortKey = _pick(sort, SORTS, "name")
    listing = datasets.list_datasets(
        page.ctx, search=q or None, owner=owner_f, sort=sort_k, limit=LIST_PAGE, offset=offset
    )
    return render(
        request,
        page,
        "datasets.html",
        nav="datasets",
        listing=listing,
        q=q,
        owner=owner_f,
        sort=sort_k,
        owners=OWNERS,
        sorts=SORTS,
        names=people(page),
        run_summaries=_run_summaries(page, [d.id for d in listing.items]),
    )


def _run_summaries(page: Page, dataset_ids: list[str]) -> dict[str, DatasetRuns]:
    """Runs count and last pass rate per listed dataset (none when runs are not readable)."""
    try:
        return runs.summarize_dataset_runs(page.ctx, dataset_ids)
    except BenchbookError:
        return {}


@router.get("/datasets/{dataset_id}")
def dataset_page(
    request: Request,
    page: PageDep,
    dataset_id: str,
    v: str = "latest",
    after: int | None = None,
    cases: int = FIRST_CASES,
) -> Response:
    """A version with its lineage, a page of cases, the activity timeline and the composer."""
    limit = CASE_PAGE if after is not None else max(1, min(cases, CASE_PAGE))
    view = datasets.get_dataset(page.ctx, dataset_id, v, after=after, limit=limit)
    versions = datasets.list_dataset_versions(page.ctx, dataset_id)
    activity = datasets.get_dataset_activity(page.ctx, dataset_id, limit=100)
    deletable = [x.version for x in versions if may_delete_dataset_version(page.ctx, x)]
    return render(
        request,
        page,
        "dataset.html",
        nav="datasets",
        view=view,
        ref=v,
        versions=versions,
        tags={t: x.version for x in versions for t in x.version_tags},
        timeline=list(reversed(activity.items)),
        deletable=deletable,
        after=after,
        shown=limit,
        first_cases=FIRST_CASES,
        names=people(page),
        lineage=view.version.produced_by,
    )


@router.get("/datasets/{dataset_id}/cases/{case_id:path}")
def case_page(
    request: Request,
    page: PageDep,
    dataset_id: str,
    case_id: str,
    v: str = "latest",
    id_query: Annotated[str, Query(alias="id")] = "",
) -> Response:
    """One case: task, env, expected, milestones, graders, metadata.

    The id is the rest of the path (``/`` included, ``%2F`` decoded the same way), or
    ``?id=`` for ids a path cannot carry (``.``, ``..``; see ``render.case_url``).
    """
    case_id = case_id or id_query
    if not case_id:
        raise NotFound(f"no case id given for {dataset_id}")
    case = datasets.get_case(page.ctx, dataset_id, v, case_id)
    return render(
        request, page, "case.html", nav="datasets", dataset_id=dataset_id, ref=v, case=case
    )


@router.get("/datasets/{dataset_id}/diff")
def diff_page(
    request: Request, page: PageDep, dataset_id: str, base: str = "", candidate: str = ""
) -> Response:
    """Compare two versions (default: the previous one → the latest)."""
    versions = datasets.list_dataset_versions(page.ctx, dataset_id)
    if len(versions) < 2 and not (base and candidate):
        raise InvalidInput(f"{dataset_id} has one version; there is nothing to compare yet")
    candidate = candidate or versions[0].version
    base = base or next((x.version for x in versions if x.version != candidate), candidate)
    diff = datasets.diff_datasets(page.ctx, dataset_id, base, candidate)
    return render(
        request,
        page,
        "diff.html",
        nav="datasets",
        dataset_id=dataset_id,
        versions=versions,
        diff=diff,
        shown=DIFF_SHOWN,
    )


@router.post("/datasets/{dataset_id}/delete")
def delete_versions(dataset_id: str, posted: FormDep) -> Response:
    """The danger dialog: delete the checked versions, or all of them (all or nothing)."""
    page, form = posted
    every = form_text(form, "scope") == "all"
    chosen = form_list(form, "version")
    if not every and not chosen:
        raise InvalidInput("tick at least one version to delete")
    if form_text(form, "confirm").strip() != dataset_id:
        raise InvalidInput(f"type the dataset id ({dataset_id}) to confirm the delete")
    datasets.delete_dataset_versions(page.ctx, dataset_id, None if every else chosen)
    remaining = _remaining(page, dataset_id)
    return RedirectResponse(
        dataset_url(dataset_id) if remaining else "/datasets?" + urlencode({"deleted": dataset_id}),
        status_code=303,
    )


@router.post("/datasets/{dataset_id}/tags")
def set_tags(dataset_id: str, posted: FormDep) -> Response:
    """Replace one own version's tags (comma-separated); a tag held by a sibling moves here."""
    page, form = posted
    version = form_text(form, "version").strip()
    tags = [t for t in form_text(form, "tags").split(",") if t.strip()]
    datasets.set_dataset_version_tags(page.ctx, dataset_id, version, tags)
    return RedirectResponse(dataset_url(dataset_id, version), status_code=303)


def _remaining(page: Page, dataset_id: str) -> bool:
    try:
        return bool(datasets.list_dataset_versions(page.ctx, dataset_id))
    except BenchbookError:  # NotFound once every version is gone
        return False


# ---- register ------------------------------------------------------------------------------

Action = Literal["validate", "register"]


def _payload(form: dict[str, Any]) -> tuple[dict[str, Any], list[ValidationIssue]]:
    """The dataset body from the form; a cases field that is not JSON is an issue at ``cases``."""
    payload: dict[str, Any] = {
        "id": form_text(form, "id").strip(),
        "version": form_text(form, "version").strip(),
    }
    description = form_text(form, "description").strip()
    if description:
        payload["description"] = description
    raw = form_text(form, "cases").strip() or "[]"
    try:
        cases = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return payload, [ValidationIssue(path="cases", message=f"not JSON: {exc}")]
    if isinstance(cases, dict) and "cases" in cases:
        cases = cases["cases"]
    payload["cases"] = cases
    return payload, []


@router.get("/register")
def register_form(request: Request, page: PageDep, id: str = "") -> Response:
    """The register form (id, version, description, cases JSON)."""
    require_register(page.ctx)
    values = {"id": id, "version": "", "description": "", "cases": ""}
    if id:
        with contextlib.suppress(BenchbookError):
            values["description"] = (
                datasets.list_dataset_versions(page.ctx, id)[0].description or ""
            )
    return render(request, page, "register.html", nav="datasets", values=values, report=None)


@router.post("/register", openapi_extra=body_limit(UPLOAD_LIMIT))
def register_post(request: Request, posted: FormDep) -> Response:
    """Validate (dry run, errors by path) or register; register re-validates first."""
    page, form = posted
    payload, issues = _payload(form)
    report = (
        ValidationReport(ok=False, errors=issues)
        if issues
        else datasets.validate_dataset(page.ctx, payload)
    )
    values = {k: form_text(form, k) for k in ("id", "version", "description", "cases")}
    if form_text(form, "action") == "register" and report.ok:
        result = datasets.register_dataset(page.ctx, datasets.parse_dataset(payload))
        return RedirectResponse(dataset_url(result.id, result.version), status_code=303)
    status = 200 if report.ok else 400
    return render(
        request,
        page,
        "register.html",
        status_code=status,
        nav="datasets",
        values=values,
        report=report,
    )
