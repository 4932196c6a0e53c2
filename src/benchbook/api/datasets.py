"""Dataset routes (SPEC D): REST over ``services.datasets``, one route per operation.

Each route's ``operation_id`` is the service function's name (``services.registry.OPERATIONS``).
Routes that only call the store through a service are plain ``def`` (FastAPI runs them in a
thread); the two that read a raw body are ``async`` and hand the parse to a thread.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse

from benchbook.api.deps import ContextDep, RequestBody
from benchbook.api.errors import error_responses
from benchbook.api.streaming import read_ahead
from benchbook.api.uploads import parse_json_body, read_body
from benchbook.contracts import Case, DatasetDiff
from benchbook.contracts.common import NOT_BLANK_PATTERN, SEMVER_PATTERN, schema_rule
from benchbook.contracts.dataset import CaseMatch, CaseNeighbours
from benchbook.contracts.registry import (
    ActivityPage,
    DatasetPage,
    DatasetView,
    DeleteResult,
    RegisterResult,
    ValidationReport,
    VersionInfo,
)
from benchbook.datasets.versions import LATEST, MAX_TAG_CHARS, MAX_TAGS_PER_VERSION
from benchbook.errors import InvalidInput
from benchbook.services import datasets as svc
from benchbook.services.bounds import INT64_MAX
from benchbook.services.context import Context

router = APIRouter(prefix="/api/datasets", tags=["datasets"])

#: ``requestBody`` of the two routes that read the raw body: a Dataset JSON object.
DATASET_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Dataset"}}},
    }
}
#: ``requestBody`` of ``POST /api/datasets/validate``: any JSON object (its problems are the
#: answer, 200 with ``ok: false``).
ANY_OBJECT_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {"application/json": {"schema": {"type": "object"}}},
    }
}
_TAG_CHAR = r"[^\s\x00-\x1f\x7f-\x9f]"
#: A version tag (``datasets.versions.clean_version_tags``): once trimmed, 1-60 characters
#: without control characters, neither ``latest`` nor a SemVer version.
VERSION_TAG_PATTERN = (
    rf"^(?!\s*(?:{LATEST}|{SEMVER_PATTERN[1:-1]})\s*$)\s*"
    rf"{_TAG_CHAR}(?:[^\x00-\x1f\x7f-\x9f]{{0,{MAX_TAG_CHARS - 2}}}{_TAG_CHAR})?\s*$"
)
EXPORT_CHUNK_BYTES = 256 * 1024

Limit = Annotated[int, Query(ge=1, le=svc.MAX_PAGE, description="Page size (1–1000).")]
Shared = Annotated[bool, Query(description="Write into the _shared tier (installation admins).")]


class TagsRequest(RequestBody):
    """Body of ``PUT …/tags``: the version's complete tag list (replaces the current one)."""

    tags: Annotated[
        list[Annotated[str, schema_rule(pattern=VERSION_TAG_PATTERN)]],
        schema_rule(maxItems=MAX_TAGS_PER_VERSION),
    ]


class DeleteRequest(RequestBody):
    """Body of ``DELETE /api/datasets/{id}``: exact versions; omit ``versions`` for all."""

    versions: Annotated[list[str], schema_rule(minItems=1)] | None = None


def _register_buffer(ctx: Context, buf: bytearray, shared: bool) -> RegisterResult:
    payload = parse_json_body(buf, "dataset body")
    del buf[:]  # the parsed objects replace the raw bytes; free them before validation
    dataset = svc.parse_dataset(payload)
    del payload
    return svc.register_dataset(ctx, dataset, shared)


@router.post(
    "",
    operation_id="register_dataset",
    status_code=201,
    response_model=RegisterResult,
    openapi_extra=DATASET_BODY,
    responses={
        200: {"model": RegisterResult, "description": "unchanged or revived"},
        **error_responses(400, 403, 409, 413),
    },
)
async def register_dataset(
    request: Request, response: Response, ctx: ContextDep, shared: Shared = False
) -> RegisterResult:
    """Register a dataset version (body: a Dataset JSON object, up to ``max_upload_bytes``).

    201 when a version was stored; 200 when identical content already existed (``created``
    false) or revived a tombstoned version (``revived`` true). 409 when the version exists with
    different content, 413 over the upload limit, 400 for malformed JSON or an invalid dataset.
    """
    buf = await read_body(request, ctx.settings.max_upload_bytes)
    result = await run_in_threadpool(_register_buffer, ctx, buf, shared)
    if not result.created:
        response.status_code = 200
    return result


def _validate_buffer(ctx: Context, buf: bytearray, shared: bool) -> ValidationReport:
    payload = parse_json_body(buf, "dataset body")
    del buf[:]
    if not isinstance(payload, dict):
        raise InvalidInput(
            f"a dataset body must be a JSON object, not {type(payload).__name__}",
            {"errors": [{"path": "(body)", "message": "expected a JSON object"}]},
        )
    return svc.validate_dataset(ctx, payload, shared)


@router.post(
    "/validate",
    operation_id="validate_dataset",
    response_model=ValidationReport,
    openapi_extra=ANY_OBJECT_BODY,
    responses=error_responses(400, 403, 413),
)
async def validate_dataset(
    request: Request, ctx: ContextDep, shared: Shared = False
) -> ValidationReport:
    """Dry-run a register: ``{ok, errors: [{path, message}], existing_versions, …}``.

    Writes nothing. Schema problems come back as ``ok: false`` with status 200; only a body that
    is not JSON (or not an object) is a 400.
    """
    buf = await read_body(request, ctx.settings.max_upload_bytes)
    return await run_in_threadpool(_validate_buffer, ctx, buf, shared)


@router.get(
    "",
    operation_id="list_datasets",
    response_model=DatasetPage,
    responses=error_responses(400),
)
def list_datasets(
    ctx: ContextDep,
    search: str | None = None,
    owner: svc.OwnerFilter = "all",
    sort: svc.SortKey = "name",
    limit: Limit = 50,
    offset: Annotated[int, Query(ge=0, json_schema_extra={"exclusiveMaximum": INT64_MAX + 1})] = 0,
) -> DatasetPage:
    """Datasets visible here (own ids and unshadowed ``_shared`` ids), searched, sorted, paged."""
    return svc.list_datasets(ctx, search, owner, sort, limit, offset)


@router.get(
    "/{dataset_id}/versions",
    operation_id="list_dataset_versions",
    response_model=list[VersionInfo],
    responses=error_responses(404),
)
def list_dataset_versions(ctx: ContextDep, dataset_id: str) -> list[VersionInfo]:
    """Live versions of the id's owner, highest SemVer first."""
    return svc.list_dataset_versions(ctx, dataset_id)


@router.get(
    "/{dataset_id}/versions/{ref}",
    operation_id="get_dataset",
    response_model=DatasetView,
    responses=error_responses(400, 404),
)
def get_dataset(
    ctx: ContextDep,
    dataset_id: str,
    ref: str,
    after: Annotated[
        int | None,
        Query(
            description="``next_after`` of the previous page.",
            json_schema_extra={"minimum": 0, "maximum": svc.MAX_AFTER},
        ),
    ] = None,
    limit: Limit = 50,
) -> DatasetView:
    """A version (SemVer, ``latest`` or a tag) with one keyset page of cases."""
    return svc.get_dataset(ctx, dataset_id, ref, after, limit)


@router.get(
    "/{dataset_id}/versions/{ref}/cases.jsonl",
    operation_id="export_dataset",
    response_class=StreamingResponse,
    responses={
        200: {"content": {"application/x-ndjson": {}}, "description": "one case per line"},
        **error_responses(400, 404),
    },
)
def export_dataset(
    ctx: ContextDep,
    dataset_id: str,
    ref: str,
    after: Annotated[
        int | None,
        Query(
            description="Start after this 0-based position (resume: lines received − 1).",
            json_schema_extra={"minimum": 0, "maximum": svc.MAX_AFTER},
        ),
    ] = None,
) -> StreamingResponse:
    """Stream every case of a version as JSONL (canonical JSON, one case per line), or those
    after position ``after``."""
    chunks = svc.export_dataset_chunks(ctx, dataset_id, ref, EXPORT_CHUNK_BYTES, after)
    return StreamingResponse(
        read_ahead(chunks),
        media_type="application/x-ndjson",
        headers={"Content-Disposition": f'attachment; filename="{dataset_id}-{ref}.jsonl"'},
    )


@router.get(
    "/{dataset_id}/versions/{ref}/cases/{case_id:path}",
    operation_id="get_case",
    response_model=Case,
    responses=error_responses(404),
)
def get_case(ctx: ContextDep, dataset_id: str, ref: str, case_id: str) -> Case:
    """One case of a version by id (ids may contain ``/``, e.g. ``<domain>/<id>``)."""
    return svc.get_case(ctx, dataset_id, ref, case_id)


@router.get(
    "/{dataset_id}/versions/{ref}/search",
    operation_id="search_cases",
    response_model=list[CaseMatch],
    responses=error_responses(400, 404),
)
def search_cases(
    ctx: ContextDep,
    dataset_id: str,
    ref: str,
    q: Annotated[
        str,
        Query(
            description="Text to find in case ids and contents (case-insensitive).",
            json_schema_extra={"pattern": NOT_BLANK_PATTERN},
        ),
    ],
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> list[CaseMatch]:
    """Up to ``limit`` cases whose id, task, expected or metadata contains ``q``, in version
    order, each with its 0-based position."""
    return svc.search_cases(ctx, dataset_id, ref, q, limit)


@router.get(
    "/{dataset_id}/versions/{ref}/neighbours/{case_id:path}",
    operation_id="get_case_neighbours",
    response_model=CaseNeighbours,
    responses=error_responses(404),
)
def get_case_neighbours(ctx: ContextDep, dataset_id: str, ref: str, case_id: str) -> CaseNeighbours:
    """A case's 0-based position in its version and the ids of the cases before and after it."""
    return svc.get_case_neighbours(ctx, dataset_id, ref, case_id)


@router.get(
    "/{dataset_id}/diff",
    operation_id="diff_datasets",
    response_model=DatasetDiff,
    responses=error_responses(400, 404),
)
def diff_datasets(
    ctx: ContextDep,
    dataset_id: str,
    base: Annotated[str, Query(description="Version, ``latest`` or tag.")],
    candidate: Annotated[str, Query(description="Version, ``latest`` or tag.")] = "latest",
) -> DatasetDiff:
    """Added, removed and changed cases (field by field) and metadata changes."""
    return svc.diff_datasets(ctx, dataset_id, base, candidate)


@router.delete(
    "/{dataset_id}/versions/{ref}",
    operation_id="delete_dataset_version",
    response_model=DeleteResult,
    responses=error_responses(403, 404),
)
def delete_dataset_version(ctx: ContextDep, dataset_id: str, ref: str) -> DeleteResult:
    """Tombstone one exact version ``ref`` (not ``latest``, not a tag: 404) of the caller's
    workspace. (``ref`` as in ``GET`` on the same path, which also takes tags.)"""
    return svc.delete_dataset_version(ctx, dataset_id, ref)


@router.delete(
    "/{dataset_id}",
    operation_id="delete_dataset_versions",
    response_model=DeleteResult,
    responses=error_responses(400, 403, 404),
)
def delete_dataset_versions(
    ctx: ContextDep,
    dataset_id: str,
    versions: Annotated[list[str] | None, Query(description="Exact versions.")] = None,
    body: Annotated[DeleteRequest | None, Body()] = None,
) -> DeleteResult:
    """Tombstone versions all-or-nothing; ``versions`` in the body, the query or both (all
    named ones), omitted = all.

    One missing or forbidden version rejects the whole request and deletes nothing.
    """
    named = [*(body.versions or [] if body is not None else []), *(versions or [])]
    given = (body is not None and body.versions is not None) or versions is not None
    chosen = list(dict.fromkeys(named)) if given else None
    return svc.delete_dataset_versions(ctx, dataset_id, chosen)


@router.put(
    "/{dataset_id}/versions/{version}/tags",
    operation_id="set_dataset_version_tags",
    response_model=VersionInfo,
    responses=error_responses(400, 403, 404),
)
def set_dataset_version_tags(
    ctx: ContextDep, dataset_id: str, version: str, body: TagsRequest
) -> VersionInfo:
    """Replace a version's movable tags; a tag held by another version moves here."""
    return svc.set_dataset_version_tags(ctx, dataset_id, version, body.tags)


@router.get(
    "/{dataset_id}/activity",
    operation_id="get_dataset_activity",
    response_model=ActivityPage,
    responses=error_responses(400, 404),
)
def get_dataset_activity(
    ctx: ContextDep,
    dataset_id: str,
    before: Annotated[
        int | None,
        Query(
            description="``next_before`` of the previous page.",
            json_schema_extra={"minimum": 0, "exclusiveMaximum": INT64_MAX + 1},
        ),
    ] = None,
    limit: Limit = 50,
) -> ActivityPage:
    """The dataset's timeline, newest first (registered, deleted, revived, tagged)."""
    return svc.get_dataset_activity(ctx, dataset_id, before, limit)
