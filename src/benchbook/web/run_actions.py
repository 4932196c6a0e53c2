"""Run actions on pages: the start-run form (``GET /runs/new``, ``POST /runs``), the rescore
button (``POST /runs/{run_id}/rescore``) and the scorecard tags form
(``POST /scorecards/{scorecard_id}/tags``).

Each post calls one service (``start_run``, ``rescore_run``, ``set_scorecard_tags``) and
redirects (POST-redirect-GET) to the run page; the services decide who may. The run page
includes ``run_actions.html`` with ``run`` and ``scorecards``; it asks :func:`run_controls`
(the services' rule, ``services.controls``) which controls to show.
"""

from __future__ import annotations

import re
from typing import Any

import orjson
from fastapi import APIRouter, Request, Response
from fastapi.responses import RedirectResponse

from benchbook.contracts.dataset import GraderSpec, RunGrader
from benchbook.contracts.run import Run, StartRunRequest
from benchbook.errors import BenchbookError, Conflict, Forbidden, InvalidInput, NotFound
from benchbook.services import datasets, harnesses, runs, scorecards
from benchbook.services.context import Context
from benchbook.services.controls import RunControls, may_start_run, require_start_run
from benchbook.services.controls import run_controls as service_run_controls
from benchbook.services.validation import parse_model
from benchbook.web.errors import PageRoute
from benchbook.web.render import TEMPLATES, render, run_url
from benchbook.web.session import FormDep, Page, PageDep, form_text

router = APIRouter(route_class=PageRoute, include_in_schema=False)

FIELDS = (
    "dataset",
    "harness",
    "graders",
    "case_ids",
    "tags",
    "limit",
    "repeats",
    "budget_usd",
    "concurrency",
)
DEFAULTS = {"repeats": "1", "concurrency": "4"}
SUGGESTED = 200


def run_controls(ctx: Context, run: Run) -> RunControls:
    """For ``run_actions.html``: the service's answer to what the caller may do to ``run``."""
    return service_run_controls(ctx, run.workspace, run.status, run.created_by or "")


# may_start_run(page.ctx): whether a list or page shows a "Start a run" button
TEMPLATES.env.globals.update(run_controls=run_controls, may_start_run=may_start_run)


class FieldError(InvalidInput):
    """Bad input in one form field (shown beside it)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message, {"errors": [{"path": field, "message": message}]})
        self.field = field


def parse_graders(text: str, field: str = "graders") -> list[RunGrader] | None:
    """One grader a line: ``ID`` or ``ID={json config}`` (``judge={…}`` for a judge); None
    when empty (each case's own graders).

    Raises:
        FieldError: a line whose config is not JSON or not a valid grader spec, by line.
    """
    specs = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        gid, sep, raw = line.strip().partition("=")
        try:
            config: Any = orjson.loads(raw) if sep else {}
            specs.append(parse_model(RunGrader, {"id": gid.strip(), "config": config}, gid))
        except orjson.JSONDecodeError as exc:
            raise FieldError(
                field, f"line {number} ({gid}): the config is not JSON: {exc}"
            ) from exc
        except InvalidInput as exc:
            raise FieldError(field, f"line {number}: {exc.message}") from exc
    return specs or None


def _number(values: dict[str, str], key: str, kind: type[int] | type[float]) -> Any:
    text = values[key].strip()
    if not text:
        return None
    try:
        return kind(text)
    except ValueError:
        noun = "a whole number" if kind is int else "a number"
        raise FieldError(key, f"{key}: {text!r} is not {noun}") from None


def start_request(values: dict[str, str]) -> StartRunRequest:
    """The ``start_run`` body from the form's fields.

    Raises:
        FieldError: a field of the wrong shape, named.
    """
    settings: dict[str, Any] = {}
    ids = [i for i in re.split(r"[\s,]+", values["case_ids"]) if i]
    tags = [t.strip() for t in values["tags"].split(",") if t.strip()]
    if ids:
        settings["case_ids"] = ids
    if tags:
        settings["tags"] = tags
    for key, kind in (("limit", int), ("repeats", int), ("concurrency", int)):
        settings[key] = _number(values, key, kind)
    settings["budget_usd"] = _number(values, "budget_usd", float)
    body = {
        "dataset": values["dataset"].strip(),
        "harness": values["harness"].strip(),
        "graders": parse_graders(values["graders"]),
        "settings": {k: v for k, v in settings.items() if v is not None},
    }
    for key in ("dataset", "harness"):
        if not body[key]:
            raise FieldError(key, f"choose a {key}")
    try:
        return parse_model(StartRunRequest, body, "run")
    except InvalidInput as exc:
        path = str(exc.details["errors"][0]["path"]).split(".")
        field = path[1] if path[0] == "settings" and len(path) > 1 else path[0]
        raise FieldError(field if field in FIELDS else "dataset", exc.message) from exc


def error_field(exc: BenchbookError) -> str:
    """The form field a service error is about (``dataset`` when it names none)."""
    if isinstance(exc, FieldError):
        return exc.field
    details = exc.details if isinstance(exc.details, dict) else {}
    path = details.get("path")
    if isinstance(path, str) and path.startswith(("graders", "harness")):
        return "graders" if path.startswith("graders") else "harness"
    if "known" in details:
        return "graders"
    if "unknown" in details:
        return "case_ids"
    if {"case_ids", "tags", "limit"} <= details.keys():
        return "limit"
    if details.keys() & {"missing_secrets", "callable", "harness"}:
        return "harness"
    if isinstance(exc, NotFound) and exc.message.startswith("harness"):
        return "harness"
    return "dataset"


def _form(
    request: Request, page: Page, values: dict[str, str], errors: dict[str, str], status: int = 200
) -> Response:
    listing = datasets.list_datasets(page.ctx, limit=SUGGESTED)
    return render(
        request,
        page,
        "run_new.html",
        status_code=status,
        nav="runs",
        values=values,
        errors=errors,
        datasets=listing.items,
        # an external harness executes nothing here (its runs are reported): never offered
        harnesses=[h for h in harnesses.list_harnesses(page.ctx) if h.kind != "external"],
    )


@router.get("/runs/new")
def new_run_form(request: Request, page: PageDep, dataset: str = "", harness: str = "") -> Response:
    """The start-run form (members and admins; 403 for viewers)."""
    require_start_run(page.ctx)
    values = {key: DEFAULTS.get(key, "") for key in FIELDS}
    values.update(dataset=dataset, harness=harness)
    return _form(request, page, values, {})


@router.post("/runs")
def start_run_post(request: Request, posted: FormDep) -> Response:
    """Start a run and go to its page; a bad field re-renders the form with the message
    beside it and every input kept."""
    page, form = posted
    values = {key: form_text(form, key) for key in FIELDS}
    try:
        run = runs.start_run(page.ctx, start_request(values))
    except (InvalidInput, NotFound, Conflict) as exc:
        return _form(request, page, values, {error_field(exc): exc.message}, exc.http_status)
    except Forbidden as exc:
        if not isinstance(exc.details, dict) or "path" not in exc.details:
            raise  # the role may not start runs at all: the 403 page
        # A refused command or endpoint is named beside its field (403, the form kept).
        return _form(request, page, values, {error_field(exc): exc.message}, exc.http_status)
    return RedirectResponse(run_url(run.id), status_code=303)


@router.post("/runs/{run_id}/rescore")
def rescore_post(run_id: str, posted: FormDep) -> Response:
    """Rescore the run's saved traces with the posted graders (one a line), then its page."""
    page, form = posted
    graders = parse_graders(form_text(form, "graders")) or []
    scorecards.rescore_run(page.ctx, run_id, graders)
    return RedirectResponse(run_url(run_id), status_code=303)


@router.post("/scorecards/{scorecard_id}/tags")
def scorecard_tags_post(scorecard_id: str, posted: FormDep) -> Response:
    """Replace a scorecard's tags (comma-separated; empty clears them), then its run's page."""
    page, form = posted
    tags = [t for t in form_text(form, "tags").split(",") if t.strip()]
    card = scorecards.set_scorecard_tags(page.ctx, scorecard_id, tags)
    return RedirectResponse(run_url(card.run_id), status_code=303)


def grader_lines(graders: list[GraderSpec]) -> str:
    """A plan's graders in the form's syntax (one ``ID`` or ``ID={json}`` a line)."""
    lines = []
    for spec in graders:
        config = orjson.dumps(spec.config, option=orjson.OPT_SORT_KEYS).decode()
        lines.append(spec.id + (f"={config}" if spec.config else ""))
    return "\n".join(lines)


TEMPLATES.env.globals.update(grader_lines=grader_lines)
