"""Benchmark routes (SPEC D, E): the catalog, preview and import (JSON or multipart upload).

``POST /api/benchmarks/preview`` and ``/import`` take either a JSON ``ImportRequest`` (file
content inline as ``text``) or ``multipart/form-data`` with a ``request`` part (the same JSON) and
a ``file`` part, streamed to a temporary file whose name's extension picks the format — or
several ``file`` parts, the task files of a folder benchmark, read as that folder
(``datasets/sources/task_files.py``); a ``folder`` part ``1`` makes even one ``file`` part a folder.
"""

from __future__ import annotations

import secrets
import shutil
import tempfile
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.concurrency import run_in_threadpool

from benchbook.api.deps import ContextDep
from benchbook.api.errors import ErrorBody, error_responses
from benchbook.api.uploads import parse_json_body, read_body
from benchbook.contracts.imports import BenchmarkInfo, ImportRequest, ImportResult, PreviewResult
from benchbook.datasets.sources.task_files import place_files
from benchbook.errors import InvalidInput
from benchbook.services import imports as svc
from benchbook.services.context import Context
from benchbook.transports.multipart import FILE_FIELD, FOLDER_FIELD, Upload, multipart_upload

router = APIRouter(prefix="/api/benchmarks", tags=["benchmarks"])

REQUEST_FIELD = "request"
#: The 409 of a source whose content does not fit the request (``errors.ContentConflict``).
CONTENT_CONFLICT = (
    "Conflict: the rows (inline text, the uploaded file) do not parse or fit the mapping, there"
    " are none, or the recipe reads a file none was sent for (details.errors by row)"
)
#: What an inline file source needs, stated positively (schemathesis generates a negated deep
#: ``if`` badly): ``text`` is given, or there is no inline recipe, or its source is not a file.
TEXT_GIVEN: dict[str, Any] = {"required": ["text"], "properties": {"text": {"type": "string"}}}
NO_INLINE_FILE_SOURCE: dict[str, Any] = {
    "properties": {
        "spec": {
            "anyOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "properties": {
                        "source": {
                            "type": "object",
                            "properties": {"kind": {"const": "huggingface"}},
                        }
                    },
                },
            ]
        }
    }
}
#: Both accepted bodies, for OpenAPI. A JSON body states ``services.imports.open_source``'s
#: rule that an inline ``file`` source brings its rows as ``text``. A multipart form carries
#: its rows in the ``file`` part, always, so its ``request`` has no ``text`` (rules of single
#: parts, no combinator across parts). The file part is spelled as OpenAPI 3.1 spells a binary
#: file (``contentMediaType``, not 3.0's ``format: binary``, which schemathesis fills with an
#: object no JSON Schema validator takes, and then lets a body break ``ImportRequest``'s own
#: ``oneOf``/``not`` rules unchecked). What a file holds no schema states: rows that do not fit
#: are 409 (``errors.ContentConflict``).
IMPORT_BODY: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "allOf": [{"$ref": "#/components/schemas/ImportRequest"}],
                    "anyOf": [TEXT_GIVEN, NO_INLINE_FILE_SOURCE],
                }
            },
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": [REQUEST_FIELD, FILE_FIELD],
                    "properties": {
                        REQUEST_FIELD: {
                            "allOf": [{"$ref": "#/components/schemas/ImportRequest"}],
                            "properties": {"text": {"type": "null"}},
                            "description": "An ImportRequest as JSON (see ``encoding``), without"
                            " ``text``: the rows are the file part.",
                        },
                        FILE_FIELD: {
                            "type": "string",
                            "contentMediaType": "application/octet-stream",
                            "description": "CSV, TSV (.tsv), JSONL, JSON or Parquet; .gz accepted;"
                            " the file name's extension picks the format. Several parts: the task"
                            " files of a folder benchmark, each named by its path"
                            " (examples/chrome/ID.json).",
                        },
                        FOLDER_FIELD: {
                            "type": "string",
                            "enum": ["1"],
                            "description": "1: the file parts are a folder's task files even"
                            " when there is one (a folder holding one task file).",
                        },
                    },
                },
                "encoding": {REQUEST_FIELD: {"contentType": "application/json"}},
            },
        },
    }
}


def _import_request(raw: bytes | bytearray) -> ImportRequest:
    payload = parse_json_body(raw, "import request")
    if isinstance(raw, bytearray):
        del raw[:]
    return svc.parse_import_request(payload)


def _is_multipart(request: Request) -> bool:
    return request.headers.get("content-type", "").lower().startswith("multipart/form-data")


def _request_field(fields: dict[str, str]) -> ImportRequest:
    unknown = sorted(set(fields) - {REQUEST_FIELD, FOLDER_FIELD})
    if unknown:
        raise InvalidInput(
            f"unknown multipart parts: {', '.join(unknown)};"
            f" send {REQUEST_FIELD!r} and {FILE_FIELD!r} (and {FOLDER_FIELD!r}=1 for a folder)"
        )
    if fields.get(FOLDER_FIELD, "1") != "1":
        raise InvalidInput(
            f"the {FOLDER_FIELD!r} part must be 1 when sent",
            {"errors": [{"path": FOLDER_FIELD, "message": "must be 1"}]},
        )
    if REQUEST_FIELD not in fields:
        raise InvalidInput(
            f"a multipart import needs a {REQUEST_FIELD!r} part (ImportRequest JSON)"
        )
    return _import_request(fields[REQUEST_FIELD].encode())


def _with_file(upload: Upload) -> ImportRequest:
    """A multipart body's ImportRequest; its rows must be the ``file`` part, never ``text``."""
    parsed = _request_field(upload.fields)
    if upload.file is None:
        raise InvalidInput(
            f"a multipart import needs a {FILE_FIELD!r} part (the rows); send inline rows as"
            " 'text' in a JSON body",
            {"errors": [{"path": FILE_FIELD, "message": "missing"}]},
        )
    if parsed.text is not None:
        raise InvalidInput(
            f"a multipart import sends its rows as the {FILE_FIELD!r} part, not as 'text'",
            {"errors": [{"path": f"{REQUEST_FIELD}.text", "message": "not with a file part"}]},
        )
    return parsed


async def _call(request: Request, ctx: Context, operation: Any) -> Any:
    """Parse either body form and run ``operation(ctx, import_request, file, file_name)``.

    Raises:
        InvalidInput: a malformed body; a multipart body without its ``file`` part, or with
            ``text`` in its ``request`` part.
    """
    limit = ctx.settings.max_upload_bytes
    if _is_multipart(request):
        files = ctx.settings.max_upload_files
        async with multipart_upload(request, limit, files) as upload:
            parsed = _with_file(upload)
            if not upload.folder:
                return await run_in_threadpool(
                    operation, ctx, parsed, upload.file, upload.file_name
                )
            root = Path(tempfile.gettempdir()) / f"benchbook-files-{secrets.token_hex(8)}"
            try:  # a job takes the folder over (moves it away); else it is removed here
                name = await run_in_threadpool(_folder, upload, root)
                return await run_in_threadpool(operation, ctx, parsed, root, name)
            finally:
                shutil.rmtree(root, ignore_errors=True)
    buf = await read_body(request, limit)
    parsed = await run_in_threadpool(_import_request, buf)
    return await run_in_threadpool(operation, ctx, parsed, None, None)


def _folder(upload: Upload, root: Path) -> str:
    """Several file parts moved into the new folder ``root``; the folder name to record."""
    return place_files([(sent.path, sent.name) for sent in upload.files], root)


@router.get("", operation_id="list_benchmarks", response_model=list[BenchmarkInfo])
def list_benchmarks(ctx: ContextDep) -> list[BenchmarkInfo]:
    """The first-party catalog (SPEC F), sorted by id: source, mapping, graders, origin."""
    return svc.list_benchmarks(ctx)


@router.get(
    "/{benchmark}",
    operation_id="get_benchmark",
    response_model=BenchmarkInfo,
    responses=error_responses(404),
)
def get_benchmark(ctx: ContextDep, benchmark: str) -> BenchmarkInfo:
    """One catalog entry; 404 lists the known ids."""
    return svc.get_benchmark(ctx, benchmark)


def _preview(ctx: Context, req: ImportRequest, file: Path | None, name: str | None) -> Any:
    return svc.preview_benchmark_source(ctx, req, file, name)


@router.post(
    "/preview",
    operation_id="preview_benchmark_source",
    response_model=PreviewResult,
    openapi_extra=IMPORT_BODY,
    responses={
        **error_responses(400, 403, 404, 413, 502),
        409: {"model": ErrorBody, "description": CONTENT_CONFLICT},
    },
)
async def preview_benchmark_source(request: Request, ctx: ContextDep) -> PreviewResult:
    """Read ≤ 20 rows of the source: fields, raw rows, mapping guess, built cases, the
    one-sentence assertion and warnings. Writes nothing. 409 when the source does not parse,
    has no rows, or is a file none was sent for."""
    result: PreviewResult = await _call(request, ctx, _preview)
    return result


def _import(ctx: Context, req: ImportRequest, file: Path | None, name: str | None) -> Any:
    return svc.import_benchmark(ctx, req, file, None, name)


@router.post(
    "/import",
    operation_id="import_benchmark",
    status_code=201,
    response_model=ImportResult,
    openapi_extra=IMPORT_BODY,
    responses={
        200: {"model": ImportResult, "description": "unchanged or revived"},
        **error_responses(400, 403, 404, 413, 502),
        409: {"model": ErrorBody, "description": f"{CONTENT_CONFLICT}; or the version exists"},
    },
)
async def import_benchmark(request: Request, response: Response, ctx: ContextDep) -> ImportResult:
    """Import a source as a dataset version: 201 when stored, 200 when the identical version
    already existed (``created`` false). A bad row rejects the whole import (409, rows named);
    nothing is stored."""
    result: ImportResult = await _call(request, ctx, _import)
    if not result.created:
        response.status_code = 200
    return result
