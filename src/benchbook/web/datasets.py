"""Dataset pages: list, dataset (versions, lineage, cases, activity), case, diff, register,
the version-tags form's post and the delete dialog's post. Each handler calls
``services.datasets``; pages hold no rules.
"""

from __future__ import annotations

import contextlib
from typing import Annotated, Any, Literal
from urllib.parse import quote

import orjson
from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import RedirectResponse

from benchbook.contracts.dataset import Case
from benchbook.contracts.registry import ValidationIssue, ValidationReport
from benchbook.contracts.run import DatasetRuns
from benchbook.errors import BenchbookError, Forbidden, InvalidInput, NotFound
from benchbook.services import datasets, history, runs
from benchbook.services.controls import may_delete_dataset_version, require_register
from benchbook.services.datasets import OwnerFilter, SortKey
from benchbook.transports.limits import UPLOAD_LIMIT, body_limit
from benchbook.web.errors import PageRoute
from benchbook.web.forms import Problem, done, problem
from benchbook.web.render import dataset_url, people, render
from benchbook.web.session import FormDep, Page, PageDep, form_list, form_text

router = APIRouter(route_class=PageRoute, include_in_schema=False)

LIST_PAGE = 50
FIRST_CASES = 5
CASE_PAGE = 50
DIFF_SHOWN = 50
HISTORY_PAGE = 20
#: Metadata columns a cases table shows at most, and the longest key a column may name.
MAX_COLUMNS = 20
MAX_COLUMN_CHARS = 200
OWNERS: tuple[OwnerFilter, ...] = ("all", "own", "shared")
SORTS: tuple[SortKey, ...] = ("name", "updated", "cases")


@router.get("/")
def home() -> Response:
    """The dashboard starts at the datasets list."""
    return RedirectResponse("/datasets", status_code=303)


@router.get("/datasets")
def list_page(
    request: Request,
    page: PageDep,
    q: str = "",
    owner: OwnerFilter = "all",
    sort: SortKey = "name",
    offset: int = 0,
) -> Response:
    """Datasets list: search, owner filter, sort, stat strip, role-gated buttons. An unknown
    ``owner`` or ``sort`` is a 400 page naming the parameter and the values it takes."""
    owner_f, sort_k = owner, sort
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
    at: Annotated[int | None, Query(ge=1)] = None,
    q: str = "",
    col: Annotated[list[str] | None, Query(max_length=MAX_COLUMNS)] = None,
    picker: bool = False,
) -> Response:
    """A version with its lineage, a page of cases, the activity timeline and the composer.
    ``at`` (1-based case number) opens the page of cases starting at that case; ``q`` lists
    the first :data:`CASE_PAGE` cases whose id or content contains it instead. Each ``col``
    (at most :data:`MAX_COLUMNS`) names a metadata key shown as a column of the cases table;
    ``picker`` keeps the column picker open (it posts itself on every tick)."""
    if at is not None:
        after, cases = (at - 2 if at > 1 else None), CASE_PAGE
    columns = _columns(col or [])
    return dataset_response(
        request, page, dataset_id, v, after, cases, q=q, columns=columns, picker_open=picker
    )


def _columns(chosen: list[str]) -> list[str]:
    """The chosen metadata columns, trimmed, de-duplicated, in the order given. A key longer
    than :data:`MAX_COLUMN_CHARS` is InvalidInput naming ``col``."""
    keys = list(dict.fromkeys(k.strip() for k in chosen if k.strip()))
    for key in keys:
        if len(key) > MAX_COLUMN_CHARS:
            raise InvalidInput(
                f"col: a metadata key has at most {MAX_COLUMN_CHARS} characters",
                {"field": "col"},
            )
    return keys


def column_choices(cases: list[Case], chosen: list[str]) -> list[str]:
    """The metadata keys the column picker offers: the chosen ones first, then every other key
    of the shown cases (sorted), :data:`MAX_COLUMNS` at most."""
    seen = sorted({k for c in cases for k in c.metadata} - set(chosen))
    return [*chosen, *seen][: max(MAX_COLUMNS, len(chosen))]


def dataset_response(
    request: Request,
    page: Page,
    dataset_id: str,
    v: str = "latest",
    after: int | None = None,
    cases: int = FIRST_CASES,
    problem: Problem | None = None,
    q: str = "",
    columns: list[str] | None = None,
    picker_open: bool = False,
) -> Response:
    """The dataset page; with ``problem`` (a refused tags, comment or delete post) rendered
    with its status, the message beside the field and the posted values kept. ``columns``:
    metadata keys shown as columns of the cases table."""
    limit = CASE_PAGE if after is not None else max(1, min(cases, CASE_PAGE))
    view = datasets.get_dataset(page.ctx, dataset_id, v, after=after, limit=limit)
    versions = datasets.list_dataset_versions(page.ctx, dataset_id)
    activity = datasets.get_dataset_activity(page.ctx, dataset_id, limit=100)
    deletable = [x.version for x in versions if may_delete_dataset_version(page.ctx, x)]
    found = datasets.search_cases(page.ctx, dataset_id, v, q, CASE_PAGE) if q.strip() else None
    return render(
        request,
        page,
        "dataset.html",
        status_code=problem.status if problem else 200,
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
        problem=problem,
        q=q,
        found=found,
        columns=columns or [],
        column_choices=column_choices(view.cases, columns or []),
        col_query="".join(f"&col={quote(k, safe='')}" for k in columns or []),
        picker_open=picker_open,
    )


@router.get("/datasets/{dataset_id}/cases/{case_id:path}")
def case_page(
    request: Request,
    page: PageDep,
    dataset_id: str,
    case_id: str,
    v: str = "latest",
    id_query: Annotated[str, Query(alias="id")] = "",
    before: str | None = None,
) -> Response:
    """One case, every field whole: task, env, expected, milestones, graders, metadata (JSON
    collapsible, patches as diffs), with Previous/Next in the version's order, and its history:
    every result of it across the workspace's runs, newest first (``before`` pages on).

    The id is the rest of the path (``/`` included, ``%2F`` decoded the same way), or
    ``?id=`` for ids a path cannot carry (``.``, ``..``; see ``render.case_url``).
    """
    case_id = case_id or id_query
    if not case_id:
        raise NotFound(f"no case id given for {dataset_id}")
    case = datasets.get_case(page.ctx, dataset_id, v, case_id)
    where = datasets.get_case_neighbours(page.ctx, dataset_id, v, case_id)
    position, previous, following = where.position, where.previous, where.next
    try:
        past = history.list_case_results(page.ctx, dataset_id, case_id, before, HISTORY_PAGE)
    except Forbidden:  # a role without runs:read sees the case without its history
        past = None
    return render(
        request,
        page,
        "case.html",
        nav="datasets",
        dataset_id=dataset_id,
        ref=v,
        case=case,
        position=position,
        previous=previous,
        following=following,
        history=past,
        before=before,
    )


@router.get("/datasets/{dataset_id}/diff")
def diff_page(
    request: Request,
    page: PageDep,
    dataset_id: str,
    base: str = "",
    candidate: str = "",
    p: Annotated[int, Query(alias="page", ge=1)] = 1,
) -> Response:
    """Compare two versions (default: the previous one → the latest): the summary first, the
    metadata and each changed case at its changed leaves (JSON paths; strings as line
    diffs), and :data:`DIFF_SHOWN` added, removed and changed cases a page (``page``)."""
    versions = datasets.list_dataset_versions(page.ctx, dataset_id)
    if len(versions) < 2 and not (base and candidate):
        raise InvalidInput(f"{dataset_id} has one version; there is nothing to compare yet")
    candidate = candidate or versions[0].version
    base = base or next((x.version for x in versions if x.version != candidate), candidate)
    diff = datasets.diff_datasets(page.ctx, dataset_id, base, candidate)
    longest = max(len(diff.added), len(diff.removed), len(diff.changed))
    return render(
        request,
        page,
        "diff.html",
        nav="datasets",
        dataset_id=dataset_id,
        versions=versions,
        diff=diff,
        shown=DIFF_SHOWN,
        page_no=p,
        start=(p - 1) * DIFF_SHOWN,
        pages=max(1, -(-longest // DIFF_SHOWN)),
    )


@router.post("/datasets/{dataset_id}/delete")
def delete_versions(
    request: Request, dataset_id: str, posted: FormDep, v: str = "latest"
) -> Response:
    """The danger dialog: delete the checked versions, or all of them (all or nothing). A
    wrong confirmation or no ticked version re-opens the dialog with the message beside the
    field and the ticks kept."""
    page, form = posted
    every = form_text(form, "scope") == "all"
    chosen = form_list(form, "version")
    kept = {
        "scope": form_text(form, "scope"),
        "version": chosen,
        "confirm": form_text(form, "confirm"),
    }
    try:
        if not every and not chosen:
            raise InvalidInput("tick at least one version to delete", {"field": "version"})
        if form_text(form, "confirm").strip() != dataset_id:
            raise InvalidInput(f"type the dataset id ({dataset_id}) to confirm the delete")
        datasets.delete_dataset_versions(page.ctx, dataset_id, None if every else chosen)
    except BenchbookError as exc:
        refused = problem("delete", exc, kept, ("confirm", "version"))
        return dataset_response(request, page, dataset_id, v, problem=refused)
    which = f"all versions of {dataset_id}" if every else ", ".join(chosen)
    notice = f"Deleted {which}."
    if _remaining(page, dataset_id):
        return done(request, dataset_url(dataset_id), notice)
    return done(request, "/datasets", notice)


@router.post("/datasets/{dataset_id}/tags")
def set_tags(request: Request, dataset_id: str, posted: FormDep) -> Response:
    """Replace one own version's tags (comma-separated); a tag held by a sibling moves here.
    A refused tag (``latest``, a version number, a bad name) re-renders the page with the
    message beside the tags field and the typed text kept."""
    page, form = posted
    version = form_text(form, "version").strip()
    tags = [t for t in form_text(form, "tags").split(",") if t.strip()]
    try:
        info = datasets.set_dataset_version_tags(page.ctx, dataset_id, version, tags)
    except BenchbookError as exc:
        refused = problem("tags", exc, {"tags": form_text(form, "tags")}, ("tags",))
        return dataset_response(request, page, dataset_id, version or "latest", problem=refused)
    shown = ", ".join(info.version_tags) or "no tags"
    return done(request, dataset_url(dataset_id, version), f"{version} now has {shown}.")


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
