"""Import job routes (SPEC E.5): start an import in the background, read it, cancel it.

``POST /api/imports`` takes the same bodies as ``POST /api/benchmarks/import`` (a JSON
``ImportRequest``, or multipart with a ``request`` part and a streamed ``file`` part) and answers
202 with the ``queued`` job; an uploaded file is handed over to the job, which deletes it when
it finishes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from benchbook.api.benchmarks import IMPORT_BODY, _call
from benchbook.api.deps import ContextDep
from benchbook.api.errors import error_responses
from benchbook.contracts.imports import ImportRequest
from benchbook.contracts.jobs import ImportJob
from benchbook.services import jobs as svc
from benchbook.services.context import Context

router = APIRouter(prefix="/api/imports", tags=["imports"])


def _start(ctx: Context, req: ImportRequest, file: Path | None, name: str | None) -> Any:
    return svc.start_import(ctx, req, file, name, own_file=file is not None)


@router.post(
    "",
    operation_id="start_import",
    status_code=202,
    response_model=ImportJob,
    openapi_extra=IMPORT_BODY,
    responses=error_responses(400, 403, 413),
)
async def start_import(request: Request, ctx: ContextDep) -> ImportJob:
    """Start an import job: 202 with ``{id, state: "queued", progress, …}``. Poll
    ``GET /api/imports/{job_id}``; failures (bad rows, Hugging Face errors, conflicts) appear as
    the job's ``error`` envelope with state ``failed``, and store nothing."""
    job: ImportJob = await _call(request, ctx, _start)
    return job


@router.get("", operation_id="list_imports", response_model=list[ImportJob])
def list_imports(
    ctx: ContextDep, limit: Annotated[int, Query(ge=1, le=svc.MAX_LIST)] = 50
) -> list[ImportJob]:
    """The workspace's import jobs, most recent first."""
    return svc.list_imports(ctx, limit)


@router.get(
    "/{job_id}",
    operation_id="get_import",
    response_model=ImportJob,
    responses=error_responses(404),
)
def get_import(ctx: ContextDep, job_id: str) -> ImportJob:
    """A job's state (queued, running, succeeded, failed, cancelled), progress (rows read,
    cases built, total), and its result or error envelope. Other workspaces' jobs are 404."""
    return svc.get_import(ctx, job_id)


@router.post(
    "/{job_id}/cancel",
    operation_id="cancel_import",
    response_model=ImportJob,
    responses=error_responses(403, 404),
)
def cancel_import(ctx: ContextDep, job_id: str) -> ImportJob:
    """Cancel a job: queued jobs stop at once, running ones at their next progress report;
    nothing is stored. A finished job is returned unchanged."""
    return svc.cancel_import(ctx, job_id)
