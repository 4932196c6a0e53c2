"""The import wizard: its page, and the JSON calls its script makes.

The script builds an ``ImportRequest`` (SPEC E.1, the API's own shape) from the chosen source
and column roles and sends it with an optional ``upload_id``:

- ``POST /import/uploads`` (multipart ``file``, or several: a folder's task files) →
  ``{upload_id, name, size_bytes, files}``
- ``POST /import/preview`` ``{request, upload_id?}`` → ``preview_benchmark_source`` (with the
  catalog entries the rows match and the suggested dataset id and graders) plus the
  target's ``existing_versions`` (the version picker shows only when there are some) and its
  ``version_plan`` (``services.imports.plan_version``: the version Import will register; with
  ``checked`` = ``compare_with_latest`` for an upload: whether it equals the latest version)
- ``POST /import/jobs`` ``{request, upload_id?}`` → ``{job_id}`` (``services.jobs.start_import``);
  ``GET /import/jobs/{id}`` → the ``ImportJob`` (state, progress, then result or error).

Writes carry the session's CSRF token in ``X-CSRF-Token``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from benchbook.contracts.imports import ImportRequest
from benchbook.contracts.jobs import RecipeSummary
from benchbook.errors import BenchbookError, InvalidInput
from benchbook.services import datasets, imports, jobs, recipes, secrets, uploads
from benchbook.services.bounds import check_text
from benchbook.services.context import Context
from benchbook.services.controls import require_import
from benchbook.transports.limits import UPLOAD_LIMIT, body_limit
from benchbook.transports.multipart import Upload, multipart_upload
from benchbook.web.errors import JsonRoute, PageRoute
from benchbook.web.render import render
from benchbook.web.session import Page, PageDep

router = APIRouter(route_class=PageRoute, include_in_schema=False)
calls = APIRouter(route_class=JsonRoute, include_in_schema=False)


def _has_hf_token(ctx: Context) -> bool:
    """Whether an ``HF_TOKEN`` secret the caller can see exists (names only) or the server
    has one from its environment."""
    if ctx.settings.hf_token:
        return True
    try:
        return any(s.name == "HF_TOKEN" for s in secrets.list_secrets(ctx))
    except BenchbookError:
        return False


def _recipes(ctx: Context) -> list[RecipeSummary]:
    """Registered recipes the caller can import with (own and ``_shared``); none without
    ``recipes:read``."""
    try:
        return recipes.list_recipes(ctx)
    except BenchbookError:
        return []


def _script_json(value: Any) -> str:
    """JSON safe inside ``<script type="application/json">`` (no ``</script>`` break-out)."""
    return orjson.dumps(value).decode().replace("<", "\\u003c").replace(">", "\\u003e")


@router.get("/import")
def wizard(request: Request, page: PageDep, benchmark: str = "") -> Response:
    """The wizard: source → preview with column roles → assertion → version → progress."""
    require_import(page.ctx)
    catalog = imports.list_benchmarks(page.ctx)
    return render(
        request,
        page,
        "import.html",
        nav="datasets",
        catalog=catalog,
        catalog_json=_script_json(
            {
                b.id: {
                    "description": b.description,
                    "license": b.license,
                    "gated": b.gated,
                    "version": b.version,
                    "graders": [g.id for g in b.graders] + [g.id for g in b.extra_graders],
                }
                for b in catalog
            }
        ),
        chosen=benchmark,
        recipes=_recipes(page.ctx),
        has_hf_token=_has_hf_token(page.ctx),
        envs=("auto", "prompt", "repo", "browser", "os-use"),
    )


async def _body(request: Request) -> tuple[ImportRequest, str | None]:
    # orjson, as the API: bounded nesting (1024) instead of a RecursionError from ``json``.
    try:
        payload = orjson.loads(await request.body())
    except orjson.JSONDecodeError as exc:
        raise InvalidInput(f"the body must be JSON {{request, upload_id?}}: {exc}") from exc
    check_text(payload)
    if not isinstance(payload, dict):
        raise InvalidInput("the body must be JSON {request, upload_id?}")
    upload_id = payload.get("upload_id")
    return imports.parse_import_request(payload.get("request")), (
        str(upload_id) if upload_id else None
    )


def _existing_versions(ctx: Context, dataset_id: str) -> list[str]:
    try:
        return [v.version for v in datasets.list_dataset_versions(ctx, dataset_id)]
    except BenchbookError:
        return []


def _version_plan(
    ctx: Context, req: ImportRequest, target: str, path: Path | None, name: str | None
) -> dict[str, Any] | None:
    """``plan_version`` plus ``checked``: for an uploaded file, ``compare_with_latest``."""
    try:
        plan: dict[str, Any] = imports.plan_version(ctx, req, target)
        if plan["latest"]:
            plan["checked"] = imports.compare_with_latest(ctx, req, target, path, name)
        return plan
    except BenchbookError:
        return None


@calls.post("/import/uploads", openapi_extra=body_limit(UPLOAD_LIMIT))
async def upload(request: Request, page: PageDep) -> Response:
    """Save an uploaded file — or several ``file`` parts, the task files of a folder benchmark
    named by their paths, stored as one zip of the folder — for preview and import; returns
    ``{upload_id, name, size_bytes, files, folder}`` (``name``: the file's, or the folder's).

    Several parts are a folder; so is one part sent with the field ``folder=1`` (a folder picked
    whole that holds one task file: ``Upload.folder``)."""
    require_import(page.ctx)
    settings = page.ctx.settings
    async with multipart_upload(
        request, settings.max_upload_bytes, settings.max_upload_files
    ) as sent:
        if not sent.files or not Path(sent.files[0].name).name:  # an empty file input
            missing = {"errors": [{"path": "file", "message": "missing"}]}
            raise InvalidInput("choose a file to upload", missing)
        folder = sent.folder
        saved = await run_in_threadpool(_save_upload, page, sent, folder)
    name = saved.name.removesuffix(".zip") if folder else saved.name
    body = {"upload_id": saved.id, "name": name, "size_bytes": saved.size_bytes}
    return JSONResponse(body | {"files": len(sent.files), "folder": folder})


def _save_upload(page: Page, sent: Upload, folder: bool) -> uploads.Upload:
    """Store the upload in the database, where any server can reach it (blocking I/O: run
    in a worker thread); a ``folder`` as one zip of its files."""
    if folder:
        return uploads.save_upload_files(page.ctx, [(f.path, f.name) for f in sent.files])
    with sent.files[0].path.open("rb") as f:
        return uploads.save_upload(page.ctx, f, sent.files[0].name)


@calls.post("/import/preview", openapi_extra=body_limit(UPLOAD_LIMIT))
async def preview(request: Request, page: PageDep) -> Response:
    """Preview ≤ 20 rows with the request's mapping; writes nothing."""
    req, upload_id = await _body(request)
    out = await run_in_threadpool(_preview, page, req, upload_id)
    return JSONResponse(out)


def _preview(page: Page, req: ImportRequest, upload_id: str | None) -> dict[str, Any]:
    """The preview (may wait on Hugging Face; blocking: run in a worker thread)."""
    path, name = uploads.upload_path(page.ctx, upload_id) if upload_id else (None, None)
    result = imports.preview_benchmark_source(page.ctx, req, file=path, file_name=name)
    # Without a chosen id, the version is planned for the id the preview suggests.
    target = req.id or result.suggested_id or (req.spec.id if req.spec else req.benchmark) or ""
    out: dict[str, Any] = result.model_dump(mode="json")
    out["existing_versions"] = _existing_versions(page.ctx, target) if target else []
    out["dataset_id"] = target
    out["version_plan"] = _version_plan(page.ctx, req, target, path, name) if target else None
    return out


@calls.post("/import/jobs", openapi_extra=body_limit(UPLOAD_LIMIT))
async def start_job(request: Request, page: PageDep) -> Response:
    """Start an import in the background; poll ``/import/jobs/{job_id}`` (``start_import``
    authorizes)."""
    req, upload_id = await _body(request)
    job = await run_in_threadpool(uploads.start_import_from_upload, page.ctx, req, upload_id)
    return JSONResponse({"job_id": job.id}, status_code=202)


@calls.get("/import/jobs/{job_id}")
def job_status(job_id: str, page: PageDep) -> Response:
    """A job's state, progress (rows read, cases built, total) and its result or error."""
    return JSONResponse(jobs.get_import(page.ctx, job_id).model_dump(mode="json"))
